package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/mcp"
)

// Secrets: an entry's ${secret:NAME} is resolved from the user's secret
// store (internal/secretstore: the keychain, else a 0600 file in
// ~/.freecode/auth) at each connect; a server whose secret is not set
// fails at once naming it (mcp.FailureSecret, Status.MissingSecrets), and
// SetSecret, a frontend's answer to that, stores it and starts the
// servers that missed it.

// lookupSecret is the Conns' secret lookup (mcp.ConnOptions.Secrets).
func (w *Workspace) lookupSecret(name string) (string, bool) {
	if w.secrets == nil {
		return "", false
	}
	return mcp.LookupSecret(w.secrets, name)
}

// SetSecret stores value as the secret name and starts again the servers
// that failed for the want of it, waiting for each to connect or fail. It
// returns where the secret is kept ("the OS keychain", or the file) and
// the servers started. The value is never logged nor recorded: the audit
// trail says that the secret was set, by name.
func (w *Workspace) SetSecret(ctx context.Context, name, value string) (string, []string, error) {
	if w.secrets == nil {
		return "", nil, errors.New("setting a secret: no home directory to keep it in")
	}
	if err := secretstore.ValidName(name); err != nil {
		return "", nil, err
	}
	where, err := w.secrets.Set(ctx, name, value)
	if err != nil {
		return "", nil, fmt.Errorf("setting secret %s: %w", name, err)
	}
	w.logger.Info("secret set", "name", name, "where", where)
	w.trail.record(audit.Event{Kind: audit.KindConfig, File: where, By: "freecode", Detail: "secret " + name + " set"})
	var started []string
	for _, st := range w.Statuses() {
		if st.LastErrorKind != mcp.FailureSecret || !slices.Contains(st.MissingSecrets, name) {
			continue
		}
		if _, err := w.StartServer(ctx, st.Name); err != nil {
			w.logger.Warn("starting a server after its secret was set", "server", st.Name, "error", err)
		}
		started = append(started, st.Name)
	}
	return where, started, nil
}

// StoredSecret returns the value of the secret name and whether the
// store has one (an install never replaces another value under a name).
func (w *Workspace) StoredSecret(ctx context.Context, name string) (string, bool, error) {
	if w.secrets == nil {
		return "", false, nil
	}
	v, err := w.secrets.Get(ctx, name)
	if errors.Is(err, secretstore.ErrNotFound) {
		return "", false, nil
	}
	return v, err == nil, err
}
