package main

// Moving the secrets an import would write into the config as they are
// (Claude's and Cursor's files hold API keys literally in "env" and
// "headers") into the secret store, each value replaced by its
// ${secret:NAME}.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/mcp"
)

// literalSecret is one value of an imported entry that looks like a
// credential written out: the value the logs would mask (mcp.SecretValue),
// not a reference already.
type literalSecret struct {
	server, field, key string // field is "env" or "headers"
	// prefix is what stays before the reference: a header's scheme
	// ("Bearer "); value is the secret itself.
	prefix, value string
	// name is the secret it is kept as, once chosen.
	name string
}

// what names the value for a person: "GITHUB_TOKEN of github".
func (l literalSecret) what() string {
	w := l.key
	if l.field == "headers" {
		w = "header " + l.key
	}
	return termtext.Escape(w) + " of " + termtext.Escape(l.server)
}

// authSchemes are the Authorization schemes whose credential follows a
// space; the scheme stays in the header as written.
var authSchemes = []string{"bearer", "basic", "token", "bot", "apikey"}

// literalSecrets returns the values of s's env and headers that look like
// credentials written out, in key order.
func literalSecrets(s config.Server) []literalSecret {
	var out []literalSecret
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		v := s.Env[k]
		if v != "" && !strings.Contains(v, "${") && mcp.SecretValue(k, v) {
			out = append(out, literalSecret{server: s.Name, field: "env", key: k, value: v})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		v := s.Headers[k]
		if v == "" || strings.Contains(v, "${") {
			continue
		}
		prefix := ""
		if scheme, rest, ok := strings.Cut(v, " "); ok && slices.Contains(authSchemes, strings.ToLower(scheme)) {
			prefix, v = scheme+" ", strings.TrimSpace(rest)
		}
		if v != "" && mcp.SecretValue(k, v) {
			out = append(out, literalSecret{server: s.Name, field: "headers", key: k, prefix: prefix, value: v})
		}
	}
	return out
}

// secretNameOf is the secret a value is kept as: an environment
// variable's own name, else (or when taken) SERVER_KEY in capitals.
func secretNameOf(l literalSecret, first bool) string {
	if first && l.field == "env" && secretstore.ValidName(l.key) == nil {
		return l.key
	}
	return secretstore.ScopedName(l.server, l.key)
}

// moveLiteralSecrets keeps the literal credentials of servers in the
// store and puts ${secret:NAME} in their place, in servers itself. A name
// another value holds already (in the store, or earlier in this import)
// is not overwritten: the value gets SERVER_KEY instead, and if that is
// taken too it stays where it was, said. With dryRun nothing is stored
// and servers are left as they are; what would move is said all the same.
func moveLiteralSecrets(ctx context.Context, out io.Writer, store *secretstore.Store, servers []config.Server, found []literalSecret, dryRun bool) error {
	chosen := map[string]string{} // name → value, this import's
	held := func(ctx context.Context, name string) (string, bool, error) {
		if v, ok := chosen[name]; ok {
			return v, true, nil
		}
		v, err := store.Get(ctx, name)
		if errors.Is(err, secretstore.ErrNotFound) {
			return "", false, nil
		}
		return v, err == nil, err
	}
	for i := range found {
		l := &found[i]
		var names []string
		for _, first := range []bool{true, false} {
			if n := secretNameOf(*l, first); secretstore.ValidName(n) == nil {
				names = append(names, n)
			}
		}
		name, err := secretstore.Choose(ctx, names, l.value, held)
		if err != nil {
			return err
		}
		if name != "" {
			l.name = name
			chosen[name] = l.value
		}
	}
	verb := "Moved"
	if dryRun {
		verb = "Would move"
	}
	for _, l := range found {
		if l.name == "" {
			fmt.Fprintf(out, "  ! %s stays in the config: the secret names %s are taken by other values\n", l.what(), secretNameOf(l, true))
			continue
		}
		if !dryRun {
			if _, err := store.Set(ctx, l.name, l.value); err != nil {
				// Nothing is lost: the value stays as it was written.
				fmt.Fprintf(out, "  ! %s stays in the config: %s\n", l.what(), termtext.EscapeLines(err.Error()))
				continue
			}
			i := slices.IndexFunc(servers, func(s config.Server) bool { return s.Name == l.server })
			ref := l.prefix + "${" + config.SecretPrefix + l.name + "}"
			if l.field == "env" {
				servers[i].Env[l.key] = ref
			} else {
				servers[i].Headers[l.key] = ref
			}
		}
		fmt.Fprintf(out, "  %s %s into the secret %s\n", verb, l.what(), l.name)
	}
	return nil
}

// offerMoveSecrets finds the literal credentials of servers and, when
// move says so or a person at a terminal agrees, moves them into the
// store (moveLiteralSecrets). move is nil when --move-secrets was not
// given. Elsewhere it says which values stay written out and how to move
// them.
func offerMoveSecrets(ctx context.Context, in *secretInput, out io.Writer, servers []config.Server, move *bool, dryRun bool) error {
	var found []literalSecret
	for _, s := range servers {
		found = append(found, literalSecrets(s)...)
	}
	if len(found) == 0 || move != nil && !*move {
		return nil
	}
	n := len(found)
	if move == nil {
		what := make([]string, n)
		for i, l := range found {
			what[i] = l.what()
		}
		fmt.Fprintf(out, "%d %s written out in the file: %s.\n", n, plural(n, "value looks like a credential", "values look like credentials"), strings.Join(what, ", "))
		if !in.tty || dryRun {
			fmt.Fprintln(out, "Without --move-secrets they are copied as written; with it they go to the OS keychain (else ~/.freecode/auth) and the config holds ${secret:NAME} in their place.")
			return nil
		} else {
			fmt.Fprint(in.prompt, "Keep them in the OS keychain (else ~/.freecode/auth) and ${secret:NAME} in the config? [Y/n] ")
			a, err := in.line()
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if a = strings.ToLower(strings.TrimSpace(a)); a != "" && a != "y" && a != "yes" {
				fmt.Fprintln(out, "  copied as they are")
				return nil
			}
		}
	}
	store, err := openSecrets()
	if err != nil {
		return err
	}
	return moveLiteralSecrets(ctx, out, store, servers, found, dryRun)
}
