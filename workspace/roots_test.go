package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

// Servers are shown the roots: those of Options at connect, then each
// SetRoots (notifications/roots/list_changed), and the same after a
// reconnect. A workspace without roots declares no roots capability.
func TestRoots(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{extraServer(t, "srv")}, nil))
	a, b := t.TempDir(), filepath.Join(t.TempDir(), "with space")
	w := e.openWith(t, &Options{Roots: []string{a}})
	sub := w.Subscribe(&SubscribeOptions{Logs: true})
	defer sub.Close()
	settle(t, w)

	roots := func() string {
		t.Helper()
		r := call(t, w, "mcp__srv__roots", `{}`, nil)
		if r.IsError {
			t.Fatalf("roots: %s", r.Text())
		}
		return r.Text()
	}
	if got, want := roots(), rootURI(a); got != want {
		t.Errorf("roots at connect: %q, want %q", got, want)
	}
	w.SetRoots([]string{b, a})
	// The client takes the change, then tells the server, which says so.
	await(t, sub, "roots changed", func(ev *LogEvent) bool { return ev.Log.Message == "roots changed" })
	want := rootURI(a) + "\n" + rootURI(b)
	if got := roots(); got != want {
		t.Errorf("roots after SetRoots: %q, want %q", got, want)
	}
	if !strings.Contains(rootURI(b), "with%20space") {
		t.Errorf("root URI %q: the space is not escaped", rootURI(b))
	}

	// A reconnect keeps the roots: the client outlives the session.
	if r := call(t, w, "mcp__srv__crash", `{}`, allowOnce); !r.IsError {
		t.Fatalf("crash: %+v", r)
	}
	await(t, sub, "srv connected again", statusIs("srv", "connected"))
	if got := roots(); got != want {
		t.Errorf("roots after a reconnect: %q, want %q", got, want)
	}
}

func TestNoRoots(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{extraServer(t, "srv")}, nil))
	w := e.open(t)
	settle(t, w)
	if r := call(t, w, "mcp__srv__roots", `{}`, nil); !r.IsError || !strings.Contains(r.Text(), "no roots capability") {
		t.Errorf("a workspace without roots declared the roots capability: %s", r.Text())
	}
}

// extraServer is server with the tools say and roots too.
func extraServer(t testing.TB, name string) map[string]any {
	s := server(t, name)
	s["env"] = map[string]string{testServerEnv: "extra"}
	return s
}
