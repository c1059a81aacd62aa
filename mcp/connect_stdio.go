package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcpwire"
	"github.com/freecode/freecode/internal/urlpolicy"
	"github.com/freecode/freecode/mcp/proc"
	"github.com/freecode/freecode/mcp/sandbox"
)

// dialStdio starts srv's process and runs initialize over its stdio. A
// server run by npx that exits on a half-written npx cache has the cache
// removed and is started once more (npxcache.go).
func (c *Conn) dialStdio(ctx context.Context, srv config.Server, sopts *mcpsdk.ClientSessionOptions, s *session, red *urlpolicy.Redactor) error {
	base := c.opts.Environ()
	if srv.Sandboxed() && !srv.InheritEnv {
		base = withoutNetworkCredentials(base)
	}
	env := proc.Env(base, srv.Env, srv.InheritEnv)
	iw, _ := ctx.Value(installWaitKey{}).(*installWait)
	for repaired := false; ; repaired = true {
		cs, p, b, err := c.startStdio(ctx, srv, env, sopts, red, iw)
		if err == nil {
			s.cs, s.proc, s.tailFrom = cs, p, c.tail.count()
			// A daemon the server started on its way up is recorded now,
			// before anything could kill this process
			// (proc.RecordAdopted).
			proc.RecordAdopted()
			return nil
		}
		switch {
		case b == nil:
			return err
		case repaired:
			return fmt.Errorf("%w; npx installed %s afresh and it still fails that way (%s): the package itself may be broken", err, b.pkg, b.why)
		}
		if rerr := b.repair(); rerr != nil {
			c.logger.Warn("a half-written npx cache was not repaired", "dir", b.dir, "error", rerr)
			return fmt.Errorf("%w; %s", err, b.advice())
		}
		c.notice(fmt.Sprintf("npx's cache of %s in %s was half written (%s): FreeCode removed it, and npx installs the package again", b.pkg, b.dir, b.why))
	}
}

// startStdio is one attempt of dialStdio. On failure the process, if one
// was started, is stopped, and b is set when it was an npx server that
// exited on a half-written cache.
func (c *Conn) startStdio(ctx context.Context, srv config.Server, env []string, sopts *mcpsdk.ClientSessionOptions, red *urlpolicy.Redactor, iw *installWait) (_ *mcpsdk.ClientSession, _ *proc.Process, b *brokenNPX, _ error) {
	drops := c.dropCount()
	lines := c.tail.count()
	exe, err := lookCommand(srv.Command[0], srv.Cwd, env)
	if err != nil {
		return nil, nil, nil, err
	}
	c.lifeLog(LevelInfo, "starting: "+strings.Join(srv.Command, " "))
	cmd := proc.Command{
		Path: exe, Argv: srv.Command, Dir: srv.Cwd, Env: env,
		Gentle: runnerOf(srv.Command) != nil,
		Stderr: func(line string) { c.noteStderr(red.String(line)) },
	}
	var (
		pol    sandbox.Policy
		launch *sandbox.Launch
	)
	if srv.Sandboxed() {
		var err error
		if pol, launch, err = c.sandboxLaunch(srv, env); err != nil {
			return nil, nil, nil, fmt.Errorf("starting %s in its sandbox: %w", srv.Command[0], err)
		}
		desc := pol.Describe()
		c.sandbox.Store(&desc)
		// The sandbox's launcher is FreeCode's own program, found on
		// FreeCode's PATH; it runs the server's command as it was given.
		cmd.Path, cmd.Argv, cmd.Env, cmd.Session, cmd.Release = "", launch.Argv, launch.Env, true, launch.Release
	}
	p, err := proc.Start(cmd, c.logger)
	if err != nil {
		if launch != nil {
			launch.Release()
		}
		return nil, nil, nil, fmt.Errorf("starting %s: %w", srv.Command[0], err)
	}
	f := mcpwire.NewFilter(p.Stdout(), srv.MaxMessageBytes, c.logger, &mcpwire.FilterOptions{
		OnProgress: c.noteProgress,
		OnDrop:     c.noteDrop,
		Redact:     func(s string) string { return c.redactor.Load().String(s) },
	})
	t := &stdioTransport{filter: f, stdout: p.Stdout(), stdin: p.Stdin(), logger: c.logger}
	seen, _ := ctx.Value(inputSeenKey{}).(*inputSeen)
	if iw != nil {
		t.stdin = iw.seen.input(p.Stdin())
		iw.watch(ctx, p)
	} else if seen != nil {
		t.stdin = seen.input(p.Stdin())
	}
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel, which ends the look of seen
	// Watch the process while initialize runs: a server that exits at once
	// must fail the connect now, not at the timeout.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if iw == nil && seen != nil {
		seen.follow(ctx, p, &wg)
	}
	go func() {
		select {
		case <-p.Exited():
			cancel(errors.New("server process exited"))
		case <-ctx.Done():
		}
	}()
	cs, err := c.client.Connect(ctx, t, sopts)
	if err == nil {
		return cs, p, nil, nil
	}
	// An EOF usually means the process is exiting: give it a moment so
	// the error can say how it ended.
	timer := time.NewTimer(200 * time.Millisecond)
	select {
	case <-p.Exited():
	case <-timer.C:
	}
	timer.Stop()
	exited := p.ExitError() != nil
	err = c.connectError(ctx, srv.Timeout, fmt.Errorf("initialize: %w", err), p, drops)
	if iw != nil {
		// Never SIGKILL a runner at once: it may be installing, and npm
		// undoes a half-done install on SIGTERM.
		p.Stop(c.closeGrace, max(c.termGrace, runnerTermGrace))
	} else {
		p.Kill()
	}
	tail := c.tail.since(lines) // stopped: its stderr is drained
	if len(tail) > 0 {
		err = fmt.Errorf("%w; stderr: %s", err, tail[len(tail)-1])
	}
	// What happened, in the user's terms, first; err is the log's.
	if code, how, ok := p.Exit(); exited && ok {
		err = exitFailure(how, code, tail, err)
	} else if f := failureOf(err); f != nil && f.Kind == FailureTimeout {
		err = timeoutFailure(f.Msg, tail, err)
	}
	if launch != nil {
		if why := sandboxDenials(pol, srv.SandboxOf(), launch, tail); why != "" {
			if f := failureOf(err); f != nil {
				f.Msg += "; " + why
			} else {
				err = fmt.Errorf("%w; %s", err, why)
			}
		}
	}
	if exited && iw != nil && iw.r.npm != nil {
		cwd := srv.Cwd
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		b = findBrokenNPX(iw.r.npm, env, cwd, tail)
	}
	return nil, p, b, err
}
