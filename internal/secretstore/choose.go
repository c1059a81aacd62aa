package secretstore

import (
	"context"
	"regexp"
	"strings"
)

// notNameChars are the runs ScopedName makes an underscore.
var notNameChars = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// ScopedName is the name a server's secret is kept as when its own is
// taken by another value: SCOPE_NAME in capitals (the server's entry and
// the variable or header), each run of characters a name may not hold
// an underscore.
func ScopedName(scope, name string) string {
	return strings.ToUpper(notNameChars.ReplaceAllString(scope+"_"+name, "_"))
}

// Choose returns the first of names under which value may be kept without
// replacing another: one that holds nothing, or value itself, as held
// says (the value under a name, ok false for none: the store, and what
// the caller is about to save). "" when each holds another value: a
// secret another server's entry may use is never overwritten.
func Choose(ctx context.Context, names []string, value string, held func(ctx context.Context, name string) (string, bool, error)) (string, error) {
	for _, n := range names {
		v, ok, err := held(ctx, n)
		if err != nil {
			return "", err
		}
		if !ok || v == value {
			return n, nil
		}
	}
	return "", nil
}
