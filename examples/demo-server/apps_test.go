package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectApps is connect for a server started with --apps.
func connectApps(t *testing.T, proj project) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := newServerWith("freecode-demo", proj, true).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// TestApp: with --apps, show_files names its view in _meta.ui (and the
// flat key), the view is served as an MCP Apps resource whose page calls
// delete_file and show_files by name, and show_files' result carries the
// files for it; without --apps neither the tool nor the view is there.
func TestApp(t *testing.T) {
	ctx := context.Background()
	cs := connectApps(t, newMemProject())
	const uri = "ui://freecode-demo/files.html"

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "show_files" })
	if i < 0 {
		t.Fatal("no show_files with --apps")
	}
	meta, _ := json.Marshal(tools.Tools[i].Meta)
	if want := `{"ui":{"resourceUri":"` + uri + `","visibility":["model","app"]},"ui/resourceUri":"` + uri + `"}`; string(meta) != want {
		t.Errorf("show_files _meta %s; want %s", meta, want)
	}
	if a := tools.Tools[i].Annotations; a == nil || !a.ReadOnlyHint {
		t.Errorf("show_files annotations %+v; want read-only", a)
	}

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != appMIME {
		t.Fatalf("reading %s: %+v; want one part of %s", uri, rr.Contents, appMIME)
	}
	for _, s := range []string{"'ui/initialize'", "'ui/notifications/initialized'", "name: 'delete_file'", "name: 'show_files'", "ui/notifications/size-changed"} {
		if !strings.Contains(rr.Contents[0].Text, s) {
			t.Errorf("the view lacks %s", s)
		}
	}
	if _, ok := rr.Contents[0].Meta["ui"].(map[string]any)["csp"]; ok {
		t.Errorf("the view declares a csp %v; it loads nothing", rr.Contents[0].Meta)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "show_files", Arguments: map[string]any{"path": "internal"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.StructuredContent)
	if want := `{"files":["internal/greet/greet.go","internal/greet/greet_test.go"],"path":"internal"}`; string(got) != want || res.IsError {
		t.Errorf("show_files internal: %s (isError %v); want %s", got, res.IsError, want)
	}
	if d := cmp.Diff("internal/greet/greet.go\ninternal/greet/greet_test.go", res.Content[0].(*mcp.TextContent).Text); d != "" {
		t.Errorf("show_files text (-want +got):\n%s", d)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "show_files", Arguments: map[string]any{"path": "../x"}})
	if err != nil || !res.IsError {
		t.Errorf("show_files ../x: %v %+v; want a tool error", err, res)
	}

	plain := connect(t, newMemProject(), nil)
	tools, err = plain.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "show_files" }) {
		t.Error("show_files without --apps")
	}
	if _, err := plain.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Errorf("%s is served without --apps", uri)
	}
}
