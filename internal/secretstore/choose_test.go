package secretstore

import (
	"context"
	"errors"
	"testing"
)

func TestScopedName(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"github", "GITHUB_TOKEN"}:  "GITHUB_GITHUB_TOKEN",
		{"my-db", "api.key"}:        "MY_DB_API_KEY",
		{"remote", "Authorization"}: "REMOTE_AUTHORIZATION",
	} {
		if got := ScopedName(in[0], in[1]); got != want || ValidName(got) != nil {
			t.Errorf("ScopedName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

// Choose takes the first name that holds nothing or the value itself, and
// none when each holds another: nothing is overwritten.
func TestChoose(t *testing.T) {
	held := map[string]string{"A": "other", "B": "v"}
	lookup := func(_ context.Context, n string) (string, bool, error) {
		v, ok := held[n]
		return v, ok, nil
	}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"A", "B"}, "B"}, // B holds the value already: reused
		{[]string{"A", "C"}, "C"}, // C holds nothing
		{[]string{"C", "B"}, "C"},
		{[]string{"A"}, ""}, // every one holds another value
	} {
		if got, err := Choose(t.Context(), tc.names, "v", lookup); got != tc.want || err != nil {
			t.Errorf("Choose(%v) = %q, %v; want %q", tc.names, got, err, tc.want)
		}
	}
	boom := errors.New("keychain locked")
	if _, err := Choose(t.Context(), []string{"A"}, "v", func(context.Context, string) (string, bool, error) { return "", false, boom }); !errors.Is(err, boom) {
		t.Errorf("a lookup's error: %v", err)
	}
}
