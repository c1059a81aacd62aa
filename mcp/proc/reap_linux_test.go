package proc

import (
	"testing"
	"time"
)

// A server started in a session of its own (a sandbox's bwrap calls
// setsid) is this process's child, not an adopted orphan: the zombie
// reaper leaves it to its own Wait, which learns its exit code. Reaped by
// the reaper instead, the Wait failed and the code was lost ("ended"),
// which a busy test run showed now and then.
func TestReaperLeavesAStartedLeader(t *testing.T) {
	for i := range 20 {
		p, err := Start(Command{Argv: []string{"sh", "-c", "exit 4"}, Session: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Reap what is adopted while the leader exits, as the reaper's
		// goroutine may at any moment.
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				default:
					reapAdopted()
				}
			}
		}()
		select {
		case <-p.Exited():
		case <-time.After(time.Minute): // a hang guard only
			t.Fatal("the server did not exit")
		}
		close(stop)
		<-done
		if code, how, ok := p.Exit(); !ok || code != 4 {
			t.Fatalf("run %d: exit %d, %q, %v; want code 4", i, code, how, ok)
		}
		p.Stop(time.Second, time.Second)
	}
}
