package orchestrator

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/defscache"
)

// TestToolUIOf: _meta.ui is read as the extension has it, the older flat
// "ui/resourceUri" key too, and a visibility list is taken at its word.
func TestToolUIOf(t *testing.T) {
	for _, tc := range []struct {
		name             string
		meta             string
		want             *ToolUI
		forModel, forApp bool
	}{
		{"no _meta", `null`, nil, true, true},
		{"other keys only", `{"progressToken":1,"ui":"nonsense"}`, nil, true, true},
		{"view, both by default", `{"ui":{"resourceUri":"ui://a/v.html"}}`, &ToolUI{ResourceURI: "ui://a/v.html"}, true, true},
		{"app only", `{"ui":{"resourceUri":"ui://a/v.html","visibility":["app"]}}`, &ToolUI{ResourceURI: "ui://a/v.html", Visibility: []string{"app"}}, false, true},
		{"model only, no view", `{"ui":{"visibility":["model"]}}`, &ToolUI{Visibility: []string{"model"}}, true, false},
		{"both, repeated", `{"ui":{"visibility":["app","model","app"]}}`, &ToolUI{Visibility: []string{"app", "model"}}, true, true},
		{"an empty list: nobody", `{"ui":{"visibility":[]}}`, &ToolUI{Visibility: []string{}}, false, false},
		{"unknown words: nobody", `{"ui":{"visibility":["agent",7]}}`, &ToolUI{Visibility: []string{}}, false, false},
		{"not a list: the default", `{"ui":{"resourceUri":"ui://a/v.html","visibility":"app"}}`, &ToolUI{ResourceURI: "ui://a/v.html"}, true, true},
		{"legacy flat key", `{"ui/resourceUri":"ui://a/old.html"}`, &ToolUI{ResourceURI: "ui://a/old.html"}, true, true},
		{"ui.resourceUri wins over the flat key", `{"ui":{"resourceUri":"ui://a/new.html","visibility":["app"]},"ui/resourceUri":"ui://a/old.html"}`,
			&ToolUI{ResourceURI: "ui://a/new.html", Visibility: []string{"app"}}, false, true},
		{"flat key beside a visibility", `{"ui":{"visibility":["app"]},"ui/resourceUri":"ui://a/old.html"}`,
			&ToolUI{ResourceURI: "ui://a/old.html", Visibility: []string{"app"}}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var meta map[string]any
			if err := json.Unmarshal([]byte(tc.meta), &meta); err != nil {
				t.Fatal(err)
			}
			got := toolUIOf(meta)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("toolUIOf(%s) (-want +got):\n%s", tc.meta, diff)
			}
			if got.ForModel() != tc.forModel || got.ForApp() != tc.forApp {
				t.Errorf("for the model %v, the app %v; want %v, %v", got.ForModel(), got.ForApp(), tc.forModel, tc.forApp)
			}
		})
	}
}

// TestAppOnlyToolOfferedToNoModel: a tool whose visibility lacks "model"
// is in no provider definitions and no tool_search result (not even by
// its exact id or select:), and a model's call of it is refused before
// its server sees it; its own server's app calls it. A tool for both
// stays where it was.
func TestAppOnlyToolOfferedToNoModel(t *testing.T) {
	fc := newFakeRunner()
	reg := NewRegistry(nil)
	ui := func(v ...any) mcpsdk.Meta {
		return mcpsdk.Meta{"ui": map[string]any{"resourceUri": "ui://board/v.html", "visibility": v}}
	}
	move := tool("move_card", false, "")
	move.Description = "move a card on the board"
	move.Meta = ui("app")
	show := tool("show_board", true, "")
	show.Description = "show the board of cards"
	show.Meta = ui("model", "app")
	reg.SetServerTools("board", []*mcpsdk.Tool{move, show}, fc)

	for _, f := range defscache.Formats() {
		defs, err := DefsSource(reg, nil)(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range defs {
			names = append(names, d.Name)
		}
		if diff := cmp.Diff([]string{"mcp__board__show_board"}, names); diff != "" {
			t.Errorf("%s definitions (-want +got):\n%s", f, diff)
		}
	}
	s := NewToolSearch(reg, nil)
	for _, q := range []string{"move card board", "mcp__board__move_card", "select:mcp__board__move_card,mcp__board__show_board"} {
		got, _ := s.find(q, 5)
		if slices.Contains(ids(got), "mcp__board__move_card") || !slices.Contains(ids(got), "mcp__board__show_board") {
			t.Errorf("find(%q) = %v; want show_board and not the app-only move_card", q, ids(got))
		}
	}

	o := New(reg, nil)
	allow := &ExecOptions{Approver: &recordingApprover{answer: Answer{Decision: AllowOnce}}}
	rs := o.Execute(context.Background(), []ToolCall{
		{CallID: "model", Tool: "mcp__board__move_card"},
		{CallID: "app", Tool: "mcp__board__move_card", App: "board"},
		{CallID: "other app", Tool: "mcp__board__move_card", App: "elsewhere"},
		{CallID: "show", Tool: "mcp__board__show_board"},
	}, allow)
	if diff := cmp.Diff([]Decision{DecisionInvalid, DecisionAsked, DecisionInvalid, DecisionAllowed}, decisions(rs)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if !strings.Contains(rs[0].Text(), "not offered to models") || !strings.Contains(rs[2].Text(), "its own server's tools") {
		t.Errorf("refusals: %q, %q", rs[0].Text(), rs[2].Text())
	}
	if got := fc.count("move_card"); got != 1 {
		t.Errorf("the server saw %d calls of move_card; want 1, the app's", got)
	}
	info := reg.Infos("board")
	if len(info) != 2 || info[0].UI == nil || info[0].UI.ForModel() || info[0].UI.ResourceURI != "ui://board/v.html" {
		t.Errorf("infos: %+v; want move_card's ui reported, for the app alone", info)
	}
}
