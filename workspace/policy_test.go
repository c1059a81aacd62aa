package workspace

import (
	"strings"
	"testing"
)

// A call of a tool of a project server awaiting approval says why the
// tool is missing, not only that it is.
func TestWhyMissing(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.projectFile(), mcpSection([]map[string]any{server(t, "p")}, nil))
	w := e.open(t)
	settle(t, w)
	r := call(t, w, "mcp__p__echo", `{"text":"x"}`, nil)
	if want := `no such tool: "mcp__p__echo": project server "p" awaits your approval`; r.Text() != want {
		t.Errorf("result %q, want %q", r.Text(), want)
	}
	if r := call(t, w, "mcp__nope__echo", `{}`, nil); strings.Contains(r.Text(), "approval") || strings.Contains(r.Text(), "blocked") {
		t.Errorf("an unknown server's tool: %q", r.Text())
	}
}
