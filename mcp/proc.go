package mcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/urlpolicy"
)

// Process stop timings: how long a server gets to exit on stdin EOF, then
// on SIGTERM, before its whole group is killed.
const (
	defaultCloseGrace = 1 * time.Second
	defaultTermGrace  = 2 * time.Second
)

// process is one local server subprocess, the leader of its own process
// group, with its three pipes. The child gets the pipe ends as real files,
// so exec.Cmd starts no copying goroutines and Wait returns as soon as the
// child exits.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File // our write end
	stdout *os.File // our read end
	stderr *os.File // our read end
	logger *slog.Logger

	exited  chan struct{} // closed once the leader is reaped
	waitErr error         // set before exited is closed

	stopOnce sync.Once
	wg       sync.WaitGroup // the waiter and the stderr reader
}

// startProcess starts srv's command with env, stderr going into tail, and
// to onLine if set, with red's secrets masked.
func startProcess(srv config.Server, env []string, tail *tailBuffer, onLine func(string), red *urlpolicy.Redactor, logger *slog.Logger) (_ *process, err error) {
	if len(srv.Command) == 0 {
		return nil, errors.New("no command")
	}
	var files []*os.File // every pipe end, closed on failure
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(srv.Command[0], srv.Command[1:]...)
	cmd.Env = env
	cmd.Dir = srv.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr(runnerOf(srv.Command) != nil)
	if err := startServerCmd(cmd); err != nil {
		return nil, err
	}
	// The child has its ends; ours would keep the pipes open after it exits.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{
		cmd: cmd, pid: cmd.Process.Pid,
		stdin: inW, stdout: outR, stderr: errR,
		logger: logger, exited: make(chan struct{}),
	}
	recordGroup(p.pid)
	p.wg.Go(func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	})
	p.wg.Go(func() { p.readStderr(tail, onLine, red) })
	return p, nil
}

// readStderr keeps the server's stderr flowing (a full pipe would block
// the child) and its last lines, masked, in tail; onLine, if set, gets
// every line.
func (p *process) readStderr(tail *tailBuffer, onLine func(string), red *urlpolicy.Redactor) {
	br := bufio.NewReaderSize(p.stderr, 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < maxTailLine {
			line = append(line, chunk[:min(len(chunk), maxTailLine-len(line))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if s := red.String(trimLine(line)); s != "" {
			tail.add(s)
			if onLine != nil {
				onLine(s)
			}
			p.logger.Debug("server stderr", "line", s)
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

func trimLine(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// exitError describes how the process ended, once it has.
func (p *process) exitError() error {
	select {
	case <-p.exited:
		if p.waitErr == nil {
			return errors.New("process exited")
		}
		return fmt.Errorf("process %v", p.waitErr)
	default:
		return nil
	}
}

// stop ends the process and everything it started: close stdin, wait
// closeGrace, SIGTERM the group, wait termGrace, SIGKILL the group; then
// the same for what left the group (escapees, see orphans_escape_linux.go).
// It returns once the leader is reaped and the group is gone, and is safe
// to call more than once.
func (p *process) stop(closeGrace, termGrace time.Duration) {
	p.stopOnce.Do(func() {
		escapees := escapeSnapshot(p.pid)
		gone := true
		p.stdin.Close()
		if !p.waitGone(closeGrace) {
			signalGroup(p, sigTerm)
			if !p.waitGone(termGrace) {
				signalGroup(p, sigKill)
				<-p.exited
				gone = p.waitGone(5 * time.Second)
				if !gone {
					p.logger.Warn("processes of a stopped server's group still exist", "pgid", p.pid)
				}
			}
		}
		stopEscapees(p.pid, escapees, termGrace, p.logger)
		if gone {
			forgetGroup(p.pid) // else the next start reaps what is left
		}
		// The group is gone, so normally nothing holds the pipes' other
		// ends open and the stderr reader is about to see EOF. Let it drain
		// first: closing our end now would drop the last lines still in the
		// pipe — often the one that says why the server died. A child that
		// left the group (setsid) may still hold the pipe: after a bound,
		// closing our end unblocks the reader for sure.
		p.stdout.Close()
		drained := make(chan struct{})
		go func() {
			p.wg.Wait()
			close(drained)
		}()
		t := time.NewTimer(stderrDrainWait)
		select {
		case <-drained:
		case <-t.C:
			p.stderr.Close()
			<-drained
		}
		t.Stop()
		p.stderr.Close()
	})
}

// kill SIGKILLs the whole group at once, for a process that already failed.
func (p *process) kill() {
	signalGroup(p, sigKill)
	p.stop(0, 0)
}

// waitGone waits up to d for the leader to exit and its group to empty.
func (p *process) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
		return false
	}
	// The leader is gone; children it left in the group may still run, or
	// be zombies reparented to this process (a subreaper) for it to reap.
	for {
		if !groupAlive(p) {
			return true
		}
		if reapAdopted(); !groupAlive(p) {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stderrDrainWait bounds how long stop waits for a stopped server's stderr
// to reach EOF before closing our end of the pipe.
const stderrDrainWait = time.Second

// maxTailLines and maxTailLine bound the stderr tail kept for Status.
const (
	maxTailLines = 50
	maxTailLine  = 1024
)

// tailBuffer keeps the last maxTailLines lines of a server's stderr.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
	added int // lines ever added
}

func (t *tailBuffer) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.added++
	if len(t.lines) == maxTailLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:maxTailLines-1]
	}
	t.lines = append(t.lines, s)
}

// count returns how many lines were ever added, for since.
func (t *tailBuffer) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.added
}

// since returns the lines kept that were added after count returned n.
func (t *tailBuffer) since(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := min(t.added-n, len(t.lines))
	return append([]string(nil), t.lines[len(t.lines)-k:]...)
}

func (t *tailBuffer) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return nil
	}
	return append([]string(nil), t.lines...)
}

var _ io.Closer = (*os.File)(nil)
