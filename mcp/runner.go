package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp/proc"
	"github.com/freecode/freecode/mcp/sandbox"
)

// A server whose command is a package runner (npx, npm exec, pnpm dlx,
// bunx, uvx, deno run, yarn dlx) fetches and installs its package before
// it runs it, the first time, or whenever the runner finds a newer version.
// A cold npx start of server-filesystem took 17 to 24 s here, against a
// default timeout of 5 s; after an npx killed mid-install its next start
// waited 60 s more for the lock the killed one left. Killed at the timeout,
// the runner leaves its cache half written, and every later start fails.
//
// So the connect of a runner server has a timeout that does not run while
// the runner installs, within firstStartBudget. The sign of installing is
// that the server has not read the first request yet: nothing reads the
// pipe until the runner has started the server (Linux: the bytes the pipe
// still holds; elsewhere, where a pipe's writer cannot see them, the whole
// budget is given). Once the server has read it, the entry's timeout runs
// from then. A connect that fails stops the runner as any server is
// stopped, stdin closed and then SIGTERM, with runnerTermGrace before any
// SIGKILL: npm removes what it half installed on SIGTERM, in about 2 s
// here. A cache that is half written all the same (npx killed with its
// FreeCode process) is repaired once, see npxcache.go.

// firstStartBudget bounds a runner server's connect while its runner is
// installing: five times the slowest cold start measured (24 s), and more
// than npm's 60 s wait for a lock a killed npx left behind.
const firstStartBudget = 2 * time.Minute

// runnerTermGrace is how long a stopped runner gets between SIGTERM and
// SIGKILL: npm rolls back a half-done install on SIGTERM.
const runnerTermGrace = 10 * time.Second

// runner is a server command that runs a package through a package runner.
type runner struct {
	name string // as the user knows it: "npx", "npm exec", "uvx", …
	// npm is set for npx and npm exec, whose cache npxcache.go knows.
	npm *npmExec
	// registry is the host the runner installs from by default.
	registry string
}

// The registries runners install from, when nothing says otherwise.
const (
	npmRegistry  = "registry.npmjs.org"
	pypiRegistry = "pypi.org"
)

// runnerOf returns the package runner argv runs, or nil. The runner is
// told by argv[0]'s base name (without .cmd, .exe, .bat or .ps1), and for
// runners that are subcommands, by the subcommand: npm exec or x, pnpm
// dlx, bun x, yarn dlx, uv tool run, deno run or x. A Windows `cmd /c`
// in front is looked through.
func runnerOf(argv []string) *runner {
	if len(argv) == 0 {
		return nil
	}
	base := strings.ToLower(filepath.Base(argv[0]))
	if i := strings.LastIndexByte(base, '\\'); i >= 0 {
		base = base[i+1:] // a Windows path, read on any system
	}
	for _, ext := range []string{".cmd", ".exe", ".bat", ".ps1"} {
		base = strings.TrimSuffix(base, ext)
	}
	sub := ""
	if len(argv) > 1 {
		sub = argv[1]
	}
	switch {
	case base == "cmd" && len(argv) > 2 && strings.EqualFold(sub, "/c"):
		return runnerOf(argv[2:])
	case base == "npx":
		return &runner{name: "npx", npm: parseNPMExec(argv[1:]), registry: npmRegistry}
	case base == "npm" && (sub == "exec" || sub == "x"):
		return &runner{name: "npm " + sub, npm: parseNPMExec(argv[2:]), registry: npmRegistry}
	case base == "uvx":
		return &runner{name: base, registry: pypiRegistry}
	case base == "pnpx", base == "bunx":
		return &runner{name: base, registry: npmRegistry}
	case base == "pnpm" && sub == "dlx", base == "yarn" && sub == "dlx", base == "bun" && sub == "x":
		return &runner{name: base + " " + sub, registry: npmRegistry}
	case base == "uv" && sub == "tool" && len(argv) > 2 && argv[2] == "run":
		return &runner{name: "uv tool run", registry: pypiRegistry}
	case base == "deno" && (sub == "run" || sub == "x"):
		return &runner{name: "deno " + sub, registry: npmRegistry}
	}
	return nil
}

// ConnectTimeout is the longest a connect of srv may take: its timeout,
// or for a local server run by a package runner, firstStartBudget if that
// is longer (the runner may be installing), and the runner's stop if it
// fails. Whoever waits for a server to connect waits this long.
func ConnectTimeout(srv config.Server) time.Duration {
	if srv.Type == config.TypeLocal && runnerOf(srv.Command) != nil {
		return max(srv.Timeout, firstStartBudget) + proc.CloseGrace + runnerTermGrace
	}
	return srv.Timeout
}

// installWaitKey is the context key of a connect's installWait.
type installWaitKey struct{}

// errInstallTimeout is the cause of a runner server's connect ended by the
// entry's timeout, run from when the server began reading.
var errInstallTimeout = errors.New("connect timeout")

// installWait is the timeout of a runner server's connect: it cancels the
// connect's context once the server has had its input for longer than
// timeout without the connect being done. The context's own deadline is
// the budget.
type installWait struct {
	r       *runner
	timeout time.Duration
	budget  time.Duration
	cancel  context.CancelCauseFunc
	notice  func(string)
	// offline, when set, is what to tell as soon as the runner is seen
	// installing: its sandbox does not reach its registry (offlineFor).
	offline string
	stopCh  chan struct{}
	wg      sync.WaitGroup

	// seen tells when the server was seen reading (its begun is the
	// discovery's, see discoveryProbe.begun).
	seen *inputSeen

	// mu guards the fields below.
	mu        sync.Mutex
	installed bool // the server was seen reading: the runner is done
}

// newInstallWait returns ctx bounded by budget and cancelled by the wait.
// notice, if set, is told once when the runner is still installing at the
// entry's timeout. Write to the server through input, call watch once the
// process runs, and stop when the connect is over.
func newInstallWait(ctx context.Context, r *runner, timeout, budget time.Duration, notice func(string)) (context.Context, *installWait) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	ctx, cancelCause := context.WithCancelCause(ctx)
	w := &installWait{r: r, timeout: timeout, budget: budget, notice: notice, stopCh: make(chan struct{}), seen: newInputSeen()}
	w.cancel = func(err error) {
		cancelCause(err)
		cancel()
	}
	return ctx, w
}

// watch follows p, whose stdin is w.seen.input, until the connect is
// over: the timeout runs from the start, restarted by every look that
// finds the server's input unread (or nothing written yet).
func (w *installWait) watch(ctx context.Context, p *proc.Process) {
	w.wg.Go(func() {
		t := time.NewTicker(inputPoll)
		defer t.Stop()
		start := time.Now()
		last := start // when the runner was last seen installing
		noticed := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.stopCh:
				return
			case <-p.Exited():
				return
			case <-t.C:
			}
			now := time.Now()
			if !w.seen.look(p) {
				last = now
			} else {
				w.mu.Lock()
				w.installed = true
				w.mu.Unlock()
			}
			if now.Sub(last) >= w.timeout {
				w.cancel(errInstallTimeout)
				return
			}
			if !noticed && w.offline != "" && now.Sub(start) >= offlineNotice {
				w.mu.Lock()
				installed := w.installed
				w.mu.Unlock()
				if !installed && w.notice != nil {
					noticed = true
					w.notice(w.offline)
				}
			}
			if !noticed && now.Sub(start) >= w.timeout {
				noticed = true
				w.mu.Lock()
				installed := w.installed
				w.mu.Unlock()
				if !installed && w.notice != nil {
					w.notice(fmt.Sprintf("%s is still installing the server's package (a first start, or a newer version); waiting up to %v", w.r.name, w.budget))
				}
			}
		}
	})
}

// offlineNotice is how long a runner of a sandboxed server that cannot
// reach its registry installs before the user is told why it waits.
const offlineNotice = 2 * time.Second

// offlineFor says why r, the runner of srv, waits in vain when srv's
// sandbox does not reach the registry r installs from; "" when it does,
// or srv is not sandboxed. Unless the package is in the runner's cache
// the server will not start; the line that lets it is said.
func offlineFor(srv config.Server, r *runner) string {
	if r.registry == "" || !srv.Sandboxed() {
		return ""
	}
	network, domains := srv.SandboxOf().Net()
	if ok, _ := sandbox.Reaches(network, domains, "https://"+r.registry); ok {
		return ""
	}
	words := "no network"
	if network == config.NetworkDomains {
		words = "network only to " + strings.Join(domains, ", ")
		if len(domains) == 0 {
			words = "no network (an empty allow-list)"
		}
	}
	fix, _ := json.Marshal(map[string]any{"sandbox": map[string]any{"network": map[string]any{"allowedDomains": append(domains, r.registry)}}})
	return fmt.Sprintf("sandboxed: %s; %s is waiting for %s, which the sandbox does not reach: unless the package is in its cache it will not install; to let it, set in the server's entry: %s",
		words, r.name, r.registry, strings.TrimSuffix(strings.TrimPrefix(string(fix), "{"), "}"))
}

// stop ends the watch and releases its context.
func (w *installWait) stop() {
	close(w.stopCh)
	w.wg.Wait()
	w.cancel(nil)
}

// explain says what ended a connect whose ctx ended: the entry's timeout
// once the server read its input, or the budget while the runner still
// installed.
func (w *installWait) explain(ctx context.Context) (string, bool) {
	switch {
	case errors.Is(context.Cause(ctx), errInstallTimeout):
		return fmt.Sprintf("no answer within timeout %v", w.timeout), true
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		w.mu.Lock()
		installed := w.installed
		w.mu.Unlock()
		if installed {
			return fmt.Sprintf("no answer within %v (the first-start budget of a server run by %s)", w.budget, w.r.name), true
		}
		return fmt.Sprintf("%s was still installing the server's package after %v, the first-start budget; it was stopped with SIGTERM, which lets it undo a half-done install; start it again to go on", w.r.name, w.budget), true
	}
	return "", false
}
