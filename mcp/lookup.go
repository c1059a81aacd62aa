package mcp

// How an entry's references are resolved at each connect: ${env:NAME}
// from the environment servers get theirs from (ConnOptions.Environ), and
// ${secret:NAME} from the user's secret store (ConnOptions.Secrets).

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/secretstore"
)

// lookupWithSecrets is lookupEnv that also resolves ${secret:NAME}
// (config.SecretPrefix) from the secret store, and the secrets it
// resolved: every one is masked wherever the Conn shows text.
func (c *Conn) lookupWithSecrets() (func(string) (string, bool), *[]string) {
	env := c.lookupEnv()
	secrets := c.opts.Secrets
	if secrets == nil {
		secrets = defaultSecrets
	}
	var resolved []string
	return func(name string) (string, bool) {
		if n, ok := strings.CutPrefix(name, config.SecretPrefix); ok {
			v, ok := secrets(n)
			if ok && v != "" && !slices.Contains(resolved, v) {
				resolved = append(resolved, v)
			}
			return v, ok
		}
		return env(name)
	}, &resolved
}

// lookupEnv returns a lookup over the Environ snapshot.
func (c *Conn) lookupEnv() func(string) (string, bool) { return EnvLookup(c.opts.Environ()) }

// EnvLookup looks a variable up in env, KEY=VALUE pairs as os.Environ
// gives them, the last of a name winning as a process's own lookup does.
func EnvLookup(env []string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
				return v, true
			}
		}
		return "", false
	}
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
