package proc

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Stop timings: how long a server gets by default to exit on stdin EOF,
// then on SIGTERM, before its whole group is killed (see Process.Stop).
const (
	CloseGrace = 1 * time.Second
	TermGrace  = 2 * time.Second
)

// MaxLine bounds a line of stderr handed to Command.Stderr: the rest of a
// longer line is read and dropped.
const MaxLine = 1024

// Command is a server to start.
type Command struct {
	// Path is the file to run; "" means argv[0] looked up in the PATH of
	// the caller's environment (os/exec's LookPath). Argv[0] is what the
	// server is told its name is either way.
	Path string
	Argv []string
	Dir  string   // the working directory; "" is the caller's
	Env  []string // the whole environment, in os.Environ form (see Env)
	// Gentle makes the kernel's signal to the server when this process
	// dies SIGTERM instead of SIGKILL (Linux): for a package runner, which
	// may be installing and undoes a half-done install on SIGTERM.
	Gentle bool
	// Session starts the server in a session of its own (setsid), which
	// is its process group too, so it has no controlling terminal to
	// push keystrokes into: for a sandboxed server (Unix).
	Session bool
	// Release, if set, is called once when Stop is done, to let go of
	// what the caller set up for the process (a sandbox's proxy).
	Release func()
	// Stderr, if set, gets each line the server writes to stderr, without
	// its line end and cut to MaxLine bytes, on a goroutine of the
	// Process's; Stop returns once the last one was handed over.
	Stderr func(line string)
}

// Process is one local server subprocess, the leader of its own process
// group, with its three pipes. The child gets the pipe ends as real files,
// so exec.Cmd starts no copying goroutines and Wait returns as soon as the
// child exits. Its methods are safe for concurrent use.
type Process struct {
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
	release  func()
}

// Start starts c in a process group of its own, recorded until its Stop
// in this process's run record, once ReapOrphans named the run directory.
// logger, which may be nil, is told of processes a Stop could not end.
func Start(c Command, logger *slog.Logger) (_ *Process, err error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("no command")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
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
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	if c.Path != "" {
		cmd = &exec.Cmd{Path: c.Path, Args: c.Argv}
	}
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = sysProcAttr(c.Gentle, c.Session)
	if err := startServerCmd(cmd); err != nil {
		return nil, err
	}
	// The child has its ends; ours would keep the pipes open after it exits.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &Process{
		cmd: cmd, pid: cmd.Process.Pid,
		stdin: inW, stdout: outR, stderr: errR,
		logger: logger, exited: make(chan struct{}), release: c.Release,
	}
	recordGroup(p.pid)
	p.wg.Go(func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	})
	p.wg.Go(func() { p.readStderr(c.Stderr) })
	return p, nil
}

// readStderr keeps the server's stderr flowing (a full pipe would block
// the child) and hands each line to onLine, if set.
func (p *Process) readStderr(onLine func(string)) {
	br := bufio.NewReaderSize(p.stderr, 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < MaxLine {
			line = append(line, chunk[:min(len(chunk), MaxLine-len(line))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if s := trimLine(line); s != "" && onLine != nil {
			onLine(s)
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

// PID is the server's pid, which is its process group's id too.
func (p *Process) PID() int { return p.pid }

// Stdin is the write end of the server's stdin. Stop closes it.
func (p *Process) Stdin() *os.File { return p.stdin }

// Stdout is the read end of the server's stdout. Stop closes it.
func (p *Process) Stdout() *os.File { return p.stdout }

// Exited is closed once the server (its group's leader) has exited and
// was reaped; its group may live on until Stop.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitError describes how the server ended, once it has; nil while it
// runs.
func (p *Process) ExitError() error {
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

// Stop ends the server and everything it started: close stdin, wait
// closeGrace, SIGTERM the group, wait termGrace, SIGKILL the group; then
// the same for what left the group (escapees, see orphans_escape_linux.go).
// It returns once the leader is reaped, the group is gone and the last
// line of stderr was handed over, and is safe to call more than once and
// concurrently: a second call waits for the first.
func (p *Process) Stop(closeGrace, termGrace time.Duration) {
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
		if p.release != nil {
			p.release()
		}
	})
}

// Kill SIGKILLs the whole group at once, for a server that already
// failed, and then stops it as Stop does.
func (p *Process) Kill() {
	signalGroup(p, sigKill)
	p.Stop(0, 0)
}

// waitGone waits up to d for the leader to exit and its group to empty.
func (p *Process) waitGone(d time.Duration) bool {
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
