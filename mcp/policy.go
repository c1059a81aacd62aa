package mcp

import (
	"context"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/secretstore"
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

// defaultSecrets resolves ${secret:NAME} where ConnOptions.Secrets is
// nil: from the user's secret store (~/.freecode/auth's, the keychain's
// items of FreeCode), opened at each lookup.
func defaultSecrets(name string) (string, bool) {
	dir, err := config.SecretsDir()
	if err != nil {
		return "", false
	}
	return LookupSecret(secretstore.Open(dir), name)
}

// secretWait bounds one secret's lookup: a keychain waiting on an unlock
// prompt nobody sees must not hold a connect for long.
const secretWait = 20 * time.Second

// LookupSecret reads the secret name from store, for ConnOptions.Secrets:
// false when it is not set or cannot be read.
func LookupSecret(store *secretstore.Store, name string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), secretWait)
	defer cancel()
	v, err := store.Get(ctx, name)
	return v, err == nil && v != ""
}
