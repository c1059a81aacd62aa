package main

import (
	"bufio"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var testForm = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"age":    map[string]any{"type": "integer", "minimum": 0, "maximum": 150},
		"agree":  map[string]any{"type": "boolean", "default": false},
		"color":  map[string]any{"type": "string", "enum": []any{"red", "green"}, "default": "green"},
		"name":   map[string]any{"type": "string", "title": "Name\x1b[31m"},
		"sizes":  map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"const": "s", "title": "Small"}, map[string]any{"const": "l", "title": "Large"}}}},
		"weight": map[string]any{"type": "number"},
	},
	"required": []any{"name", "age"},
}

// The terminal form: required fields first, each asked until valid,
// Enter takes a default or leaves an optional field out; what the server
// wrote is escaped.
func TestTermElicitor(t *testing.T) {
	tests := []struct {
		name, input string
		want        *mcpsdk.ElicitResult
	}{
		{"answered", "Ada\nold\n200\n36\n\n2\n1,2\nheavy\n70.5\ny\n",
			&mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36.0, "agree": false, "color": "green", "sizes": []any{"s", "l"}, "weight": 70.5}}},
		{"defaults", "\nAda\n1\ny\n\n\n\n\n\n",
			&mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 1.0, "agree": true, "color": "green"}}},
		{"declined", "Ada\n1\n\n\n\n\nn\n", &mcpsdk.ElicitResult{Action: "decline"}},
		{"cancelled", "Ada\n", &mcpsdk.ElicitResult{Action: "cancel"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			e := &termElicitor{in: bufio.NewReader(strings.NewReader(tc.input)), out: &out}
			got, err := e.elicit(t.Context(), "srv", &mcpsdk.ElicitParams{Mode: "form", Message: "who?", RequestedSchema: testForm})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nshown:\n%s", diff, out.String())
			}
			if strings.Contains(out.String(), "\x1b") {
				t.Errorf("an escape sequence reached the terminal:\n%q", out.String())
			}
		})
	}
}

// A URL is shown (escaped) and "y" says it was opened.
func TestTermElicitorURL(t *testing.T) {
	var out strings.Builder
	e := &termElicitor{in: bufio.NewReader(strings.NewReader("y\n")), out: &out}
	got, err := e.elicit(context.Background(), "srv", &mcpsdk.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/a\u202e"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Action != "accept" || !strings.Contains(out.String(), "https://example.com/a") || strings.Contains(out.String(), "\u202e") {
		t.Errorf("action %q, shown:\n%q", got.Action, out.String())
	}
}
