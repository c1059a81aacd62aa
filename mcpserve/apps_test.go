package mcpserve

import (
	"slices"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppOnlyToolNotServed: the gateway's list is model-facing, so a tool
// whose _meta.ui.visibility lacks "model" is not in it, and calling it by
// name reaches nothing; a tool for the model and the app is listed and
// runs.
func TestAppOnlyToolNotServed(t *testing.T) {
	srv := backend(t, "srv")
	srv["env"].(map[string]string)[testAppsEnv] = "1"
	e := newEnv(t, []map[string]any{srv}, nil)
	e.open(t)
	cs := e.connect(t, nil)

	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "mcp__srv__app_view") || slices.Contains(names, "mcp__srv__app_only") {
		t.Errorf("listed %v; want mcp__srv__app_view and not the app-only mcp__srv__app_only", names)
	}
	if r := callTool(t, cs, "mcp__srv__app_view", `{}`); r.IsError || resultText(r) != "view shown" {
		t.Errorf("calling app_view: %v %q", r.IsError, resultText(r))
	}
	r, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "mcp__srv__app_only", Arguments: map[string]any{}})
	if err == nil && !r.IsError {
		t.Errorf("calling the app-only tool through the gateway ran it: %q", resultText(r))
	}
}
