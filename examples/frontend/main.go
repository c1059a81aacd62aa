// Command frontend is a small frontend of FreeCode's sidecar that runs a
// scripted session and prints each step: what a frontend sends, what the
// sidecar answers and tells it. `make demo` runs it; read it as an example
// of driving freecode-serve from Go (internal/frontend is the client).
//
// Usage:
//
//	frontend [--sidecar PATH] [--config PATH] [--project DIR]
//	frontend --connect [--serve-file PATH]
//
// By default it starts freecode-serve over stdio, as an editor does
// (--sidecar, default the freecode-serve beside this program or on PATH),
// with the config file --config (default $FREECODE_CONFIG or
// ~/.freecode/config.json) and the workspace folder --project (default
// the current directory), and shuts it down at the end. With --connect it
// joins a sidecar that listens (`freecode serve --listen`), found through
// its serve.json, and leaves it running.
//
// The script needs the config to hold the demo server (examples/demo-server)
// under the name --server (default "demo"). Its steps: initialize; the
// servers; the tools; the provider definitions and their hash; a batch of
// read-only calls, run side by side; two destructive calls, whose
// permission prompts it answers allow once and deny; an edit of the config
// file that adds the demo server again under the name --add (default
// "demo2"), and the notifications that follow it. It deletes README.md of
// the demo server's project, which the demo server keeps in memory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/freecode/freecode/internal/frontend"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the program, with its arguments and output streams; it returns
// the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("frontend", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sidecar   = fs.String("sidecar", "", "freecode-serve to start over stdio (default: beside this program, else on PATH)")
		config    = fs.String("config", "", "config file the sidecar serves (default $FREECODE_CONFIG or ~/.freecode/config.json)")
		project   = fs.String("project", "", "workspace folder (default: the current directory)")
		connect   = fs.Bool("connect", false, "join the sidecar that listens, through its serve.json, instead of starting one")
		serveFile = fs.String("serve-file", "", "with --connect: the serve.json (default ~/.freecode/serve.json)")
		server    = fs.String("server", "demo", "the config's name of the demo server")
		add       = fs.String("add", "demo2", "the name under which the script adds the demo server again")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "frontend: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	s := newSession(stdout, *server, *add)
	opts := &frontend.Options{ClientName: "freecode-example-frontend", OnNotification: s.notes.add, OnPermission: s.answer}
	var (
		c    *frontend.Client
		proc *exec.Cmd
		err  error
	)
	if *connect {
		c, err = frontend.DialServeFile(ctx, *serveFile, opts)
	} else {
		c, proc, err = startSidecar(*sidecar, *config, *project, opts, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "frontend:", err)
		return 1
	}
	err = s.run(ctx, c, proc != nil)
	if proc != nil {
		// After shutdown and exit the sidecar ends by itself, and the
		// Client reads what it writes until then: closing its stdout
		// first would kill it with SIGPIPE. It is stopped only if the
		// script broke off, or it does not end.
		if err != nil {
			proc.Process.Signal(syscall.SIGTERM)
		}
		if werr := waitFor(proc); werr != nil && err == nil {
			err = fmt.Errorf("freecode-serve: %w", werr)
		}
	}
	c.Close()
	if err != nil {
		fmt.Fprintln(stderr, "frontend:", err)
		return 1
	}
	return 0
}

// startSidecar starts freecode-serve over stdio, as an editor does, and
// returns a Client on its stdin and stdout. Its log goes to logTo.
func startSidecar(path, config, project string, opts *frontend.Options, logTo io.Writer) (*frontend.Client, *exec.Cmd, error) {
	if path == "" {
		path = "freecode-serve"
		if exe, err := os.Executable(); err == nil {
			if beside := filepath.Join(filepath.Dir(exe), "freecode-serve"); fileExists(beside) {
				path = beside
			}
		}
	}
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, err
		}
		project = wd
	}
	project, err := filepath.Abs(project)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(path, "--log-level", "warn")
	cmd.Stderr = logTo
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting the sidecar: %w", err)
	}
	o := *opts
	o.Folders, o.ConfigPath = []string{project}, config
	return frontend.New(pipes{stdout, stdin}, &o), cmd, nil
}

// pipes is the sidecar's stdout and stdin as one connection.
type pipes struct {
	io.ReadCloser
	io.WriteCloser
}

// Close closes both ends: the sidecar reads EOF, and reading ends.
func (p pipes) Close() error {
	return errors.Join(p.WriteCloser.Close(), p.ReadCloser.Close())
}

// waitFor waits for the sidecar to exit, at most waitGuard before it is
// sent SIGTERM.
func waitFor(proc *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- proc.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(waitGuard):
		proc.Process.Signal(syscall.SIGTERM)
		<-done
		return fmt.Errorf("it did not exit within %v of exit", waitGuard)
	}
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// waitGuard bounds every wait of the script for the sidecar, so that a
// broken setup ends with an error instead of hanging.
const waitGuard = 30 * time.Second
