package orchestrator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/toolid"
)

func ptr[T any](v T) *T { return &v }

// hashHex is the first n hex characters of the SHA-256 of s: the hash in
// de-collided tool parts and in aliases.
func hashHex(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

func TestRegistryIDsAndAliases(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 4) + "0123456789" // 90 characters
	tools := []*mcpsdk.Tool{
		tool("get.item", true, ""),
		tool("get_item", true, ""),
		tool(long, true, ""),
		tool("read", true, ""),
	}
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	reg.SetServerTools("demo", tools, fc)

	longID := "mcp__demo__" + long
	alias := toolid.Alias(longID)
	var got []string
	for _, info := range reg.Infos("demo") {
		got = append(got, info.ID+" "+info.Name+" "+info.Alias)
	}
	want := []string{
		"mcp__demo__get_item get_item ",
		"mcp__demo__get_item_" + hashHex("get.item", 6) + " get.item ",
		"mcp__demo__read read ",
		longID + " " + long + " " + alias,
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("infos (-want +got):\n%s", diff)
	}

	// The same tools in another order get the same ids.
	reg2 := NewRegistry(nil)
	rev := slices.Clone(tools)
	slices.Reverse(rev)
	reg2.SetServerTools("demo", rev, fc)
	if diff := cmp.Diff(reg.Infos(""), reg2.Infos(""), cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
		t.Errorf("ids depend on list order (-first +reversed):\n%s", diff)
	}

	// A call may name the id or the alias; both reach the original name.
	for _, name := range []string{longID, alias} {
		tl, ok := reg.Lookup(name)
		if !ok || tl.Name != long {
			t.Errorf("Lookup(%q) = %v, %v", name, tl, ok)
		}
	}
	rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: alias}, {CallID: "2", Tool: "mcp__demo__get_item_" + hashHex("get.item", 6)}}, nil)
	mustNotError(t, rs[0])
	mustNotError(t, rs[1])
	if rs[0].Text() != "ok "+long || rs[1].Text() != "ok get.item" {
		t.Errorf("results = %q, %q", rs[0].Text(), rs[1].Text())
	}

	reg.RemoveServer("demo", "")
	if _, ok := reg.Lookup(alias); ok {
		t.Errorf("alias still resolves after RemoveServer")
	}
	if got := reg.Infos(""); len(got) != 0 {
		t.Errorf("infos after RemoveServer = %v", got)
	}
}

func TestAnnotations(t *testing.T) {
	reg := NewRegistry(nil)
	reg.SetServerTools("s", []*mcpsdk.Tool{
		{Name: "none", InputSchema: map[string]any{"type": "object"}},
		{Name: "ro", Title: "Read only", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}},
		{Name: "additive", Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: ptr(false), Title: "Adds"}},
		// destructiveHint false alone does not make a tool read-only.
		{Name: "idempotent", Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: true}},
	}, newFakeRunner())
	got := reg.Infos("s")
	want := []ToolInfo{
		{ID: "mcp__s__additive", Server: "s", Name: "additive", Title: "Adds", Destructive: ptr(false), OpenWorld: ptr(true), InputSchema: emptyObjectSchema},
		{ID: "mcp__s__idempotent", Server: "s", Name: "idempotent", Destructive: ptr(true), OpenWorld: ptr(true), Idempotent: true, InputSchema: emptyObjectSchema},
		{ID: "mcp__s__none", Server: "s", Name: "none", Destructive: ptr(true), OpenWorld: ptr(true), InputSchema: json.RawMessage(`{"type":"object"}`)},
		{ID: "mcp__s__ro", Server: "s", Name: "ro", Title: "Read only", ReadOnly: true, OpenWorld: ptr(false), InputSchema: emptyObjectSchema},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("infos (-want +got):\n%s", diff)
	}
	// What a frontend is sent of the last, its JSON, is server/wire's
	// (TestToolInfoJSON there).
}

func TestToolsChangedEvents(t *testing.T) {
	reg := NewRegistry(nil)
	var events []ToolsChanged
	cancel := reg.Subscribe(func(ev ToolsChanged) { events = append(events, ev) })
	c1, c2 := newFakeRunner(), newFakeRunner()
	tools := []*mcpsdk.Tool{tool("a", true, ""), tool("b", false, "")}
	reg.SetServerTools("s", tools, c1)
	// A reconnect with equal tools: no event, but the new caller is used.
	reg.SetServerTools("s", []*mcpsdk.Tool{tool("b", false, ""), tool("a", true, "")}, c2)
	New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "mcp__s__a"}}, nil)
	if c1.count("a") != 0 || c2.count("a") != 1 {
		t.Errorf("calls: old caller %d, new caller %d; want 0, 1", c1.count("a"), c2.count("a"))
	}
	changed := tool("a", true, "")
	changed.Description = "new text"
	reg.SetServerTools("s", []*mcpsdk.Tool{changed, tool("b", false, "")}, c2)
	reg.RemoveServer("s", "failed")
	reg.RemoveServer("s", "") // already gone: no event
	if err := reg.RegisterBuiltin(&Tool{ID: "read", Runner: c1, ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	cancel()
	reg.SetServerTools("t", tools, c1)
	want := []ToolsChanged{
		{Server: "s", Reason: "added"},
		{Server: "s", Reason: "updated"},
		{Server: "s", Reason: "failed"},
		{Server: "", Reason: "added"},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestRegisterBuiltin(t *testing.T) {
	reg := NewRegistry(nil)
	fc := newFakeRunner()
	for _, bad := range []string{"", "mcp__x", "mcp", "a__b", "_a", "has space", strings.Repeat("a", 65)} {
		if err := reg.RegisterBuiltin(&Tool{ID: bad, Runner: fc}); err == nil {
			t.Errorf("RegisterBuiltin(%q) succeeded", bad)
		}
	}
	if err := reg.RegisterBuiltin(&Tool{ID: "write", Order: 2, Runner: fc}); err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterBuiltin(&Tool{ID: "read", Order: 1, ReadOnly: true, Runner: fc}); err != nil {
		t.Fatal(err)
	}
	if err := reg.RegisterBuiltin(&Tool{ID: "read", Runner: fc}); err == nil {
		t.Errorf("duplicate built-in accepted")
	}
	reg.SetServerTools("a", []*mcpsdk.Tool{tool("z", true, "")}, fc)
	var ids []string
	for _, tl := range reg.Tools("") {
		ids = append(ids, tl.ID)
	}
	if diff := cmp.Diff([]string{"read", "write", "mcp__a__z"}, ids); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	// A built-in runs through the same gate: write is not read-only, so
	// without an approver it is denied; read runs.
	rs := New(reg, nil).Execute(t.Context(), []ToolCall{{CallID: "1", Tool: "read"}, {CallID: "2", Tool: "write"}}, nil)
	if diff := cmp.Diff([]Decision{DecisionAllowed, DecisionDenied}, decisions(rs)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if fc.count("write") != 0 || fc.count("read") != 1 {
		t.Errorf("built-in calls: read %d write %d", fc.count("read"), fc.count("write"))
	}
}

func TestDefsSource(t *testing.T) {
	long := strings.Repeat("x", 70)
	reg := NewRegistry(nil)
	fc := newFakeRunner()
	if err := reg.RegisterBuiltin(&Tool{ID: "read", Description: "Read a file", Runner: fc, ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}); err != nil {
		t.Fatal(err)
	}
	reg.SetServerTools("b", []*mcpsdk.Tool{tool("two", true, `{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"string"}}}`)}, fc)
	reg.SetServerTools("a", []*mcpsdk.Tool{tool(long, true, ""), {Name: "noschema"}, tool("external", true, `{"type":"object","properties":{"p":{"$ref":"https://example.com/s.json"}}}`)}, fc)
	var problems []DefsProblem
	cache := defscache.New(DefsSource(reg, &DefsOptions{OnProblem: func(p DefsProblem) { problems = append(problems, p) }}), nil)
	reg.Subscribe(func(ToolsChanged) { cache.Invalidate() })

	e, err := cache.Get(context.Background(), defscache.FormatAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	var defs []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"input_schema"`
	}
	if err := json.Unmarshal(e.Bytes, &defs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	longAlias := toolid.Alias("mcp__a__" + long)
	if diff := cmp.Diff([]string{"read", "mcp__a__noschema", longAlias, "mcp__b__two"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if s := defs[3].InputSchema; s["$defs"] != nil || s["properties"].(map[string]any)["p"].(map[string]any)["type"] != "string" {
		t.Errorf("schema of two not self-contained: %v", s)
	}
	var ids []string
	for _, p := range problems {
		ids = append(ids, p.ToolID)
		if p.ToolID == "mcp__a__external" && !p.Dropped {
			t.Errorf("external $ref not dropped: %+v", p)
		}
	}
	slices.Sort(ids)
	if diff := cmp.Diff([]string{"mcp__a__external", "mcp__a__noschema"}, ids); diff != "" {
		t.Errorf("problems reported for (-want +got):\n%s", diff)
	}

	// A reconnect with the same tools leaves the hash alone; a change moves it.
	reg.SetServerTools("b", []*mcpsdk.Tool{tool("two", true, `{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"$defs":{"P":{"type":"string"}}}`)}, newFakeRunner())
	e2, err := cache.Get(context.Background(), defscache.FormatAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if e2.Hash != e.Hash {
		t.Errorf("hash changed on an equal reconnect")
	}
	reg.RemoveServer("b", "")
	e3, err := cache.Get(context.Background(), defscache.FormatAnthropic)
	if err != nil {
		t.Fatal(err)
	}
	if e3.Hash == e.Hash || e3.Count != 3 {
		t.Errorf("after removing b: hash %s (was %s), count %d", e3.Hash, e.Hash, e3.Count)
	}
}

// TestAliasTakenByAnID: a server that names a tool exactly like another
// tool's alias cannot make two tools share a provider name: the long id's
// alias moves to an alternative, whatever the list order, and the defs of
// every tool still build.
func TestAliasTakenByAnID(t *testing.T) {
	long := strings.Repeat("y", 70)
	squatter := strings.TrimPrefix(toolid.Alias("mcp__demo__"+long), "mcp__demo__")
	for _, order := range [][]string{{long, squatter}, {squatter, long}} {
		reg := NewRegistry(nil)
		reg.SetServerTools("demo", []*mcpsdk.Tool{tool(order[0], true, ""), tool(order[1], false, "")}, newFakeRunner())
		lt, ok := reg.Lookup("mcp__demo__" + long)
		if !ok {
			t.Fatal("long tool not registered")
		}
		if lt.Alias() == "" || lt.Alias() == "mcp__demo__"+squatter || len(lt.Alias()) > toolid.MaxNameLen {
			t.Fatalf("alias of the long tool = %q, want one of at most %d characters that is not the other tool's id", lt.Alias(), toolid.MaxNameLen)
		}
		id := "mcp__demo__" + long
		if want := strings.TrimRight(id[:55], "_") + "_" + hashHex(id+"#1", 8); lt.Alias() != want {
			t.Errorf("alias = %q, want the first alternative %q whatever the order", lt.Alias(), want)
		}
		if got, _ := reg.Lookup(lt.Alias()); got != lt {
			t.Errorf("the alias does not resolve to the long tool")
		}
		if got, _ := reg.Lookup("mcp__demo__" + squatter); got == nil || got.Name != squatter {
			t.Errorf("the other tool's id does not resolve to it")
		}
		var problems []DefsProblem
		e, err := defscache.New(DefsSource(reg, &DefsOptions{OnProblem: func(p DefsProblem) { problems = append(problems, p) }}), nil).Get(t.Context(), defscache.FormatAnthropic)
		if err != nil {
			t.Fatalf("defs do not build: %v", err)
		}
		if e.Count != 2 || len(problems) != 0 {
			t.Errorf("defs: %d tools, problems %v; want both tools", e.Count, problems)
		}
	}
}
