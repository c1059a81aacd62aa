package workspace

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/orchestrator"
)

// defNames returns the tool names of format f's array.
func defNames(t testing.TB, w *Workspace, f defscache.Format) (names []string, e *defscache.Entry) {
	t.Helper()
	e, _, err := w.Definitions(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	var defs []struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(e.Bytes, &defs); err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		names = append(names, d.Name+d.Function.Name)
	}
	return names, e
}

// deferredServer is a test server entry with "deferTools": true.
func deferredServer(t testing.TB, name string) map[string]any {
	s := server(t, name)
	s["deferTools"] = true
	return s
}

// A deferred server's tools are not in the provider definitions, and its
// connecting, changing its tools and reconnecting change no hash: the
// provider's prompt cache survives all three.
func TestDeferredServerKeepsHash(t *testing.T) {
	e := newEnv(t)
	d := deferredServer(t, "d")
	d["enabled"] = false
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), d}, nil))
	w := e.open(t)
	sub := w.Subscribe(&SubscribeOptions{ToolSet: true})
	defer sub.Close()
	settle(t, w)

	names, before := defNames(t, w, defscache.FormatAnthropic)
	want := []string{"tool_search", "mcp__a__addtool", "mcp__a__crash", "mcp__a__echo", "mcp__a__write"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("definitions (-want +got):\n%s", diff)
	}
	openai, _, err := w.Definitions(t.Context(), defscache.FormatOpenAI)
	if err != nil {
		t.Fatal(err)
	}
	hashes := func(step string) {
		t.Helper()
		for f, was := range map[defscache.Format]string{defscache.FormatAnthropic: before.Hash, defscache.FormatOpenAI: openai.Hash} {
			if _, e := defNames(t, w, f); e.Hash != was {
				t.Errorf("%s: the %s hash changed", step, f)
			}
		}
	}

	if _, err := w.StartServer(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	await(t, sub, "d's tools", func(ev *ToolSetEvent) bool { return ev.Server == "d" })
	hashes("d connected")
	if _, e := defNames(t, w, defscache.FormatAnthropic); e.Deferred != 4 || e.FullSize <= len(e.Bytes) {
		t.Errorf("the entry counts %d deferred tools, full size %d of %d bytes; want 4 and more", e.Deferred, e.FullSize, len(e.Bytes))
	}

	if r := call(t, w, "mcp__d__addtool", `{"name":"fresh"}`, allowOnce); r.IsError {
		t.Fatalf("addtool on d: %+v", r)
	}
	await(t, sub, "d's new tool", func(ev *ToolSetEvent) bool { return ev.Server == "d" })
	hashes("d changed its tools")

	if _, err := w.RestartServer(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	settle(t, w)
	hashes("d reconnected")

	// A change of a's tools is the first change providers hear of, once
	// the new tool is accepted (until then it reaches no model).
	if r := call(t, w, "mcp__a__addtool", `{"name":"fresh"}`, allowOnce); r.IsError {
		t.Fatalf("addtool on a: %+v", r)
	}
	await(t, sub, "a's new tool", func(ev *ToolSetEvent) bool { return ev.Server == "a" })
	hashes("a's new tool awaits review")
	if _, err := w.AcceptDefinition(t.Context(), "a", "fresh", ""); err != nil {
		t.Fatal(err)
	}
	ev := await[*ToolsChangedEvent](t, sub, "tools changed", nil)
	if ev.Hashes[defscache.FormatAnthropic] == before.Hash {
		t.Errorf("the first tools-changed event has the old hash: %+v", ev)
	}
	if names, _ := defNames(t, w, defscache.FormatAnthropic); !slices.Contains(names, "mcp__a__fresh") || slices.Contains(names, "mcp__d__fresh") {
		t.Errorf("definitions after a's change: %v", names)
	}
}

// searchNames returns the ids tool_search finds for query.
func searchNames(t testing.TB, w *Workspace, query string) []string {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"query": query, "limit": orchestrator.MaxSearchLimit})
	r := call(t, w, orchestrator.ToolSearchName, string(args), nil)
	if r.IsError {
		t.Fatalf("tool_search: %+v", r)
	}
	b, err := json.Marshal(r.StructuredContent) // the text is prose when nothing matches
	if err != nil {
		t.Fatal(err)
	}
	var res orchestrator.SearchResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, ft := range res.Tools {
		found = append(found, ft.Name)
	}
	return found
}

// tool_search finds the deferred tools, and a deferred tool is called by
// its id like any other, under the same rules.
func TestToolSearchDeferred(t *testing.T) {
	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), deferredServer(t, "d")}, nil))
	writeRaw(t, e.userRules(), `{"permissions": {"deny": ["mcp__d__write"]}}`)
	w := e.open(t)
	settle(t, w)

	r := call(t, w, orchestrator.ToolSearchName, `{"query": "echo the text"}`, nil)
	if r.IsError || r.Decision != orchestrator.DecisionAllowed {
		t.Fatalf("tool_search: %+v", r)
	}
	var res orchestrator.SearchResult
	if err := json.Unmarshal([]byte(r.Text()), &res); err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, ft := range res.Tools {
		found = append(found, ft.Name)
	}
	// Only the deferred server's tools: a's are in the definitions already.
	if len(found) == 0 || found[0] != "mcp__d__echo" || slices.ContainsFunc(found, func(n string) bool { return strings.HasPrefix(n, "mcp__a__") }) {
		t.Errorf("found %v", found)
	}
	if r := call(t, w, "mcp__d__echo", `{"text":"deferred"}`, nil); r.IsError || r.Text() != "deferred" {
		t.Errorf("calling a deferred tool: %+v", r)
	}
	if r := call(t, w, "mcp__d__write", `{}`, allowOnce); !r.IsError || r.Decision != orchestrator.DecisionDenied {
		t.Errorf("a deferred tool a rule denies: %+v", r)
	}
	// tool_search offers no tool a deny rule forbids, and a rule written
	// while the workspace runs counts at the next search.
	if found := searchNames(t, w, "pretend to write"); slices.Contains(found, "mcp__d__write") {
		t.Errorf("tool_search finds a denied tool: %v", found)
	}
	if found := searchNames(t, w, "echo the text"); !slices.Contains(found, "mcp__d__echo") {
		t.Fatalf("tool_search misses echo: %v", found)
	}
	sub := w.Subscribe(nil)
	defer sub.Close()
	writeRaw(t, e.userRules(), `{"permissions": {"deny": ["mcp__d__write", "mcp__d__e*"]}}`)
	await[*RulesChangedEvent](t, sub, "the new rules", nil)
	if found := searchNames(t, w, "echo the text"); slices.Contains(found, "mcp__d__echo") {
		t.Errorf("tool_search finds a tool denied since: %v", found)
	}
}

// mcp.deferTools "auto" defers every MCP tool once the workspace outgrows
// its threshold, and stays so while servers come and go; a config edit
// puts the new mode in force at once, tool_search with it.
func TestAutoDeferAndConfigEdits(t *testing.T) {
	e := newEnv(t)
	b := server(t, "b")
	b["enabled"] = false
	// Each test server has 4 tools: a alone is under the threshold.
	auto := map[string]any{"deferTools": "auto", "autoDeferTools": 5}
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), b}, auto))
	w := e.open(t)
	sub := w.Subscribe(&SubscribeOptions{ToolSet: true})
	defer sub.Close()
	settle(t, w)

	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"a alone, under the threshold", func() {}, []string{"tool_search", "mcp__a__addtool", "mcp__a__crash", "mcp__a__echo", "mcp__a__write"}},
		{"b connects: 8 tools, over it", func() {
			if _, err := w.StartServer(t.Context(), "b"); err != nil {
				t.Fatal(err)
			}
			await(t, sub, "b's tools", func(ev *ToolSetEvent) bool { return ev.Server == "b" })
		}, []string{"tool_search"}},
		{"b stops: still deferred", func() {
			if _, err := w.StopServer(t.Context(), "b"); err != nil {
				t.Fatal(err)
			}
			await(t, sub, "b's tools gone", func(ev *ToolSetEvent) bool { return ev.Server == "b" })
		}, []string{"tool_search"}},
		{"a higher threshold starts over", func() {
			auto["autoDeferTools"] = 100
			writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), b}, auto))
		}, []string{"tool_search", "mcp__a__addtool", "mcp__a__crash", "mcp__a__echo", "mcp__a__write"}},
		{"deferTools true", func() {
			writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), b}, map[string]any{"deferTools": true}))
		}, []string{"tool_search"}},
		{"deferTools false: no tool_search either", func() {
			writeJSON(t, e.cfgPath, mcpSection([]map[string]any{server(t, "a"), b}, nil))
		}, []string{"mcp__a__addtool", "mcp__a__crash", "mcp__a__echo", "mcp__a__write"}},
	}
	for i, s := range steps {
		s.do()
		names, _ := defNames(t, w, defscache.FormatOpenAI)
		// A config edit applies when the watcher reports it: until then
		// each tools-changed event is a moment to look again.
		for i > 2 && !slices.Equal(names, s.want) {
			await[*ToolsChangedEvent](t, sub, s.name+": definitions rebuilt", nil)
			names, _ = defNames(t, w, defscache.FormatOpenAI)
		}
		if diff := cmp.Diff(s.want, names); diff != "" {
			t.Errorf("%s: definitions (-want +got):\n%s", s.name, diff)
		}
	}
	if tools := w.Tools(""); slices.ContainsFunc(tools, func(ti orchestrator.ToolInfo) bool { return ti.ID == orchestrator.ToolSearchName }) {
		t.Errorf("tool_search is still registered with deferral off")
	}
}
