package mcp

import (
	"github.com/freecode/freecode/config"
)

// policy returns why the organization's managed policy blocks srv, or
// nil (see ConnOptions.Policy).
func (c *Conn) policy(srv config.Server, lookup func(string) (string, bool)) *config.Blocked {
	if c.opts.Policy != nil {
		return c.opts.Policy(srv, lookup)
	}
	return SystemPolicy(srv, lookup)
}

// SystemPolicy is the system's managed policy as it is now, applied to
// srv: why it blocks srv, or nil. Managed settings that do not load block
// every server, since a policy that cannot be read is not one FreeCode
// may take for absent.
func SystemPolicy(srv config.Server, lookup func(string) (string, bool)) *config.Blocked {
	m, err := config.LoadManaged()
	if err != nil {
		return &config.Blocked{Reason: "blocked because your organization's managed settings cannot be read: " + err.Error()}
	}
	return m.Check(srv, lookup)
}
