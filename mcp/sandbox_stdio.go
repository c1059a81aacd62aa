package mcp

import (
	"strings"

	"github.com/freecode/freecode/config"
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
