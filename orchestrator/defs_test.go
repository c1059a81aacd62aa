package orchestrator

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/canonjson"
	"github.com/freecode/freecode/internal/providerschema"
)

// capturedDir holds real servers' tools/list results, captured once (see
// its README).
const capturedDir = "../internal/providerschema/testdata/schemas"

// loadCapturedTools reads one captured tools/list result, each input
// schema kept as the server sent it.
func loadCapturedTools(t testing.TB, file string) []*mcpsdk.Tool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name        string                  `json:"name"`
			Description string                  `json:"description"`
			InputSchema json.RawMessage         `json:"inputSchema"`
			Annotations *mcpsdk.ToolAnnotations `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var tools []*mcpsdk.Tool
	for _, tl := range list.Tools {
		tools = append(tools, &mcpsdk.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema, Annotations: tl.Annotations})
	}
	return tools
}

// TestRealToolsThroughDefsCache runs the captured real tools through the
// registry, DefsSource and the defs cache, as the sidecar does: every tool
// is kept, each array is valid JSON of the provider's shape, and listing
// the same tools in another order (a reconnect) keeps every hash.
func TestRealToolsThroughDefsCache(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(capturedDir, "*.tools.json"))
	if len(files) < 3 {
		t.Fatalf("found %d captured servers, want 3", len(files))
	}
	reg := NewRegistry(nil)
	lists := map[string][]*mcpsdk.Tool{}
	total := 0
	for _, file := range files {
		server := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(file), ".tools.json"), "server-")
		lists[server] = loadCapturedTools(t, file)
		total += len(lists[server])
		reg.SetServerTools(server, lists[server], newFakeRunner())
	}
	var problems []DefsProblem
	c := defscache.New(DefsSource(reg, &DefsOptions{
		Converter: providerschema.New(nil),
		OnProblem: func(p DefsProblem) { problems = append(problems, p) },
	}), nil)
	_, first, err := c.Refresh(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range defscache.Formats() {
		e, err := c.Get(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		if e.Count != total {
			t.Errorf("%s: %d tools, want %d (problems %v)", f, e.Count, total, problems)
		}
		var arr []map[string]any
		if err := json.Unmarshal(e.Bytes, &arr); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, d := range arr {
			if f == defscache.FormatOpenAI {
				d, _ = d["function"].(map[string]any)
				if _, ok := d["parameters"].(map[string]any); !ok {
					t.Fatalf("openai tool without parameters: %v", d)
				}
			} else if _, ok := d["input_schema"].(map[string]any); !ok {
				t.Fatalf("anthropic tool without input_schema: %v", d)
			}
		}
	}
	// The source marks its schemas canonical, so the cache copies them
	// as they are: they must be exactly what canonjson makes of them, or
	// the hash would depend on the converter's spacing and key order.
	for _, f := range defscache.Formats() {
		defs, err := DefsSource(reg, nil)(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			canon, err := canonjson.Append(nil, d.Schema)
			if err != nil {
				t.Fatalf("%s %s: %v", f, d.Name, err)
			}
			if !d.Canonical || !bytes.Equal(canon, d.Schema) {
				t.Errorf("%s %s: Canonical=%v, schema not in canonical form:\n%s\nwant\n%s", f, d.Name, d.Canonical, d.Schema, canon)
			}
		}
	}
	// A reconnect lists the tools in another order.
	for server, tools := range lists {
		rev := slices.Clone(tools)
		slices.Reverse(rev)
		reg.SetServerTools(server, rev, newFakeRunner())
	}
	c.Invalidate()
	changed, again, err := c.Refresh(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if changed {
		t.Errorf("the same tools in another order changed the hashes: %v → %v", first, again)
	}
}
