package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/freecode/freecode/config"
)

// ErrUnavailable is wrapped by Prepare's error when this system cannot
// sandbox a server (no bubblewrap, no sandbox-exec, another OS): such a
// server does not start, unless its entry says "sandbox": false.
var ErrUnavailable = errors.New("sandbox unavailable")

// Options are Prepare's options; nil means the defaults.
type Options struct {
	// Executable is the program bound into a Linux sandbox as its exec
	// stub and, with an allow-list, its bridge (see RunBridge); "" is
	// this one.
	Executable string
	// Dial, if set, makes the proxy's outgoing connections (see
	// ProxyOptions).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnDecision, if set, is told of each of the proxy's decisions.
	OnDecision func(Decision)
}

// Launch is a server's command line made to run in its sandbox.
type Launch struct {
	Argv []string
	Env  []string
	// Proxy is the filtering proxy of a sandbox with an allow-list; nil
	// for the other networks.
	Proxy *Proxy
	// Release lets go of what the sandbox holds outside (the proxy, its
	// socket): call it once the process has been stopped.
	Release func()
}

// Prepare returns the command line that runs argv, with environment env,
// under p. On failure it holds nothing; the error wraps ErrUnavailable
// where this system cannot sandbox at all.
func Prepare(p Policy, argv, env []string, opts *Options) (*Launch, error) {
	if opts == nil {
		opts = &Options{}
	}
	if p.NPMCache != "" {
		if err := os.MkdirAll(p.NPMCache, 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: npm's cache %s: %w", p.NPMCache, err)
		}
	}
	return prepare(p, argv, sandboxEnv(env, p), opts)
}

// sandboxEnv is env with TMPDIR set to the sandbox's private /tmp (the
// caller's TMPDIR is not writable in there) and npm's cache to p's, the
// one the sandbox lets it write. With an allow-list, the user's proxy
// settings are left out, in every case a tool may read them: the
// sandbox's own (proxyEnv, set after) are its only way out, and a
// leftover NPM_CONFIG_PROXY or no_proxy would send a tool around them, to
// fail. The user's upstream proxy is not chained: the sandbox's proxy
// dials the addresses it checked directly.
func sandboxEnv(env []string, p Policy) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "TMPDIR":
		case p.NPMCache != "" && strings.EqualFold(k, "npm_config_cache"):
		case p.Network == config.NetworkDomains && isProxyVar(k):
		default:
			out = append(out, kv)
		}
	}
	out = append(out, "TMPDIR=/tmp")
	if p.NPMCache != "" {
		out = append(out, "npm_config_cache="+p.NPMCache)
	}
	return out
}

// newProxy starts p's proxy on ln, closing ln with it.
func newProxy(p Policy, ln net.Listener, opts *Options) *Proxy {
	px := NewProxy(p.Domains, &ProxyOptions{Dial: opts.Dial, OnDecision: opts.OnDecision})
	px.Serve(ln)
	return px
}

func executable(opts *Options) (string, error) {
	if opts.Executable != "" {
		return opts.Executable, nil
	}
	return os.Executable()
}
