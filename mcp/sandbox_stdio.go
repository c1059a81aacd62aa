package mcp

import (
	"net/url"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcp/proc"
	"github.com/freecode/freecode/mcp/sandbox"
)

// sandboxLaunch prepares srv's command line to run in its sandbox
// (config.Server.Sandboxed), with env as its environment. The proxy of a
// sandbox with an allow-list tells the user, through a notice, of each
// connection it refused while the server runs.
func (c *Conn) sandboxLaunch(srv config.Server, env []string) (sandbox.Policy, *sandbox.Launch, error) {
	b := srv.SandboxOf()
	pol, err := sandbox.PolicyOf(srv, sandbox.HostOf(nil))
	if err != nil {
		return sandbox.Policy{}, nil, err
	}
	l, err := sandbox.Prepare(pol, srv.Command, env, &sandbox.Options{
		OnDecision: func(d sandbox.Decision) {
			if !d.Allowed {
				for _, dn := range sandbox.Denials(pol, b, nil, []sandbox.Decision{d}) {
					c.notice("sandbox: " + dn.String())
				}
			}
		},
	})
	return pol, l, err
}

// withoutNetworkCredentials returns environ, the sidecar's environment,
// with the user name and password taken out of the URLs of its network
// settings (proc.IsNetworkEnv: a proxy, a package index), for a sandboxed
// server: a sandbox keeps the user's credentials from its server, as it
// gives it ~/.npmrc without its tokens. An entry's own env is the entry's,
// and passed as it is.
func withoutNetworkCredentials(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if ok && proc.IsNetworkEnv(name) && strings.Contains(v, "@") {
			if u, err := url.Parse(v); err == nil && u.User != nil {
				u.User = nil
				kv = name + "=" + u.String()
			}
		}
		out = append(out, kv)
	}
	return out
}

// sandboxDenials is what the sandbox refused a server that failed to
// start, from its stderr tail and the proxy's log, as one clause for the
// error; "" if nothing.
func sandboxDenials(pol sandbox.Policy, b config.Sandbox, l *sandbox.Launch, tail []string) string {
	var log []sandbox.Decision
	if l.Proxy != nil {
		log = l.Proxy.Log()
	}
	ds := sandbox.Denials(pol, b, tail, log)
	if len(ds) == 0 {
		return ""
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "sandbox: " + strings.Join(parts, "; ")
}
