package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/orchestrator"
)

// hangGuard only stops a broken test from hanging; no test relies on it.
const hangGuard = 60 * time.Second

// server returns a config entry that runs the test server as name.
func server(t testing.TB, name string) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"name": name, "type": "local", "command": []string{exe}, "env": map[string]string{testServerEnv: "1"}}
}

// mcpSection returns a config file's contents with servers and the given
// extra keys of its mcp section.
// unpinned returns the server entry s with pinning off, for the tests
// whose servers add tools to make a tools change: a tool new to a pinned
// server changes no definitions until it is accepted.
func unpinned(s map[string]any) map[string]any {
	s["pinning"] = "off"
	return s
}

func mcpSection(servers []map[string]any, extra map[string]any) map[string]any {
	m := map[string]any{"servers": servers}
	for k, v := range extra {
		m[k] = v
	}
	return map[string]any{"mcp": m}
}

// writeJSON writes v to path as JSON, making the directory.
func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, path, string(b))
}

func writeRaw(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// env is one test's files and workspace.
type env struct {
	dir     string // holds config.json and the user's settings.json
	cfgPath string
	root    string // the project
	w       *Workspace
}

func (e *env) userRules() string            { return filepath.Join(e.dir, "settings.json") }
func (e *env) projectFile() string          { return config.ProjectSettingsPath(e.root) }
func (e *env) localRules() string           { return filepath.Join(e.root, ".freecode", "settings.local.json") }
func (e *env) open(t testing.TB) *Workspace { return e.openWith(t, nil) }

func newEnv(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	return &env{dir: dir, cfgPath: filepath.Join(dir, "config.json"), root: t.TempDir()}
}

// openWith starts the workspace of e; the test's cleanup closes it.
func (e *env) openWith(t testing.TB, opts *Options) *Workspace {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.ConfigPath, o.Root = e.cfgPath, e.root
	if o.ResultsDir == "" {
		o.ResultsDir = t.TempDir()
	}
	w, err := New(t.Context(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	e.w = w
	return w
}

// await reads events until one of type T for which ok (nil: any) is true.
func await[T Event](t testing.TB, sub *Subscription, what string, ok func(T) bool) T {
	t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case ev, open := <-sub.Events():
			if !open {
				t.Fatalf("subscription closed while awaiting %s; saw:\n%s", what, strings.Join(seen, "\n"))
			}
			if e, is := ev.(T); is && (ok == nil || ok(e)) {
				return e
			}
			seen = append(seen, describe(ev))
		case <-timer.C:
			t.Fatalf("no %s within %v; saw:\n%s", what, hangGuard, strings.Join(seen, "\n"))
		}
	}
}

// describe prints an event for a test's failure message.
func describe(ev Event) string {
	switch ev := ev.(type) {
	case *StatusEvent:
		return fmt.Sprintf("status %s %v tools=%d err=%q", ev.Status.Name, ev.Status.State, ev.Status.ToolCount, ev.Status.LastError)
	case *ToolsChangedEvent:
		return fmt.Sprintf("tools changed server=%q reason=%q", ev.Server, ev.Reason)
	case *ToolSetEvent:
		return fmt.Sprintf("tool set server=%q reason=%q", ev.Server, ev.Reason)
	case *ProblemsEvent:
		return fmt.Sprintf("problems %s %+v", ev.Path, ev.Problems)
	case *RulesChangedEvent:
		return fmt.Sprintf("rules %+v", ev.Rules)
	case *ProjectEvent:
		return fmt.Sprintf("project %+v", ev.Project)
	case *MissedEvent:
		return fmt.Sprintf("missed %d", ev.Count)
	case *ResourcesChangedEvent:
		return fmt.Sprintf("resources changed server=%q reason=%q", ev.Server, ev.Reason)
	case *PromptsChangedEvent:
		return fmt.Sprintf("prompts changed server=%q reason=%q", ev.Server, ev.Reason)
	}
	return fmt.Sprintf("%T", ev)
}

// statusIs matches a server's status event by name and state name.
func statusIs(name, state string) func(*StatusEvent) bool {
	return func(ev *StatusEvent) bool { return ev.Status.Name == name && ev.Status.State.String() == state }
}

// allowOnce is the approver of a frontend whose user allows everything once.
var allowOnce = orchestrator.ApproverFunc(func(context.Context, orchestrator.Request) (orchestrator.Answer, error) {
	return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
})

// call runs one call; a nil approver is a frontend that cannot be asked.
func call(t testing.TB, w *Workspace, tool, args string, a orchestrator.Approver) orchestrator.ToolResult {
	t.Helper()
	rs := w.Execute(t.Context(), []orchestrator.ToolCall{{CallID: "c1", Tool: tool, Arguments: json.RawMessage(args)}},
		&orchestrator.ExecOptions{Approver: a})
	return rs[0]
}

// settle waits for every started server to connect or fail.
func settle(t testing.TB, w *Workspace) {
	t.Helper()
	if err := w.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}
}
