package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

const appsServer = `
-- config.json --
{"mcp": {"servers": [{{server "srv" "FREECODE_SERVERTEST_APPS" "1"}}]}}
`

// TestMCPApps: of an MCP Apps server's tools (a real subprocess), the one
// whose _meta.ui.visibility lacks "model" is in no provider definitions
// and cannot be called as a model's call, but runs as its own server's
// app's call; one without "app" is not an app's to call; freecode/tools
// reports each tool's view (from _meta.ui or the older flat key) and
// audience; the view is read through freecode/resources/read with the
// extension's mime type and its _meta.ui.csp; and the server was told the client takes it.
func TestMCPApps(t *testing.T) {
	servertest.Run(t, appsServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		view := "ui://srv/board.html"

		tools, err := ed.Client.Tools(t.Context(), "srv")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]*protocol.ToolUI{}
		for _, ti := range tools {
			if strings.HasPrefix(ti.Name, "board_") {
				got[ti.Name] = ti.UI
			}
		}
		want := map[string]*protocol.ToolUI{
			"board_show":   {ResourceURI: view, Visibility: []protocol.Audience{"model", "app"}},
			"board_move":   {ResourceURI: view, Visibility: []protocol.Audience{"app"}},
			"board_hint":   {ResourceURI: view, Visibility: []protocol.Audience{"model"}},
			"board_legacy": {ResourceURI: view, Visibility: []protocol.Audience{"model", "app"}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the tools' ui in freecode/tools (-want +got):\n%s", diff)
		}

		for _, format := range []protocol.Format{protocol.FormatAnthropic, protocol.FormatOpenAI} {
			defs, err := ed.Client.Definitions(t.Context(), format)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(defs.Tools)
			for _, name := range []string{"mcp__srv__board_show", "mcp__srv__board_hint", "mcp__srv__board_legacy"} {
				if !strings.Contains(string(b), `"`+name+`"`) {
					t.Errorf("%s definitions lack %s", format, name)
				}
			}
			if strings.Contains(string(b), "board_move") {
				t.Errorf("%s definitions offer the app-only board_move to the model", format)
			}
		}

		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		results, err := ed.Client.Execute(t.Context(),
			protocol.ToolCall{CallID: "model-move", Tool: "mcp__srv__board_move", Arguments: json.RawMessage(`{"text":"by the model"}`)},
			protocol.ToolCall{CallID: "app-move", Tool: "mcp__srv__board_move", Arguments: json.RawMessage(`{"text":"by the app"}`), App: &protocol.CallApp{Server: "srv"}},
			protocol.ToolCall{CallID: "other-app", Tool: "mcp__srv__board_move", Arguments: json.RawMessage(`{}`), App: &protocol.CallApp{Server: "elsewhere"}},
			protocol.ToolCall{CallID: "app-hint", Tool: "mcp__srv__board_hint", Arguments: json.RawMessage(`{}`), App: &protocol.CallApp{Server: "srv"}},
			protocol.ToolCall{CallID: "model-show", Tool: "mcp__srv__board_show", Arguments: json.RawMessage(`{}`)},
			protocol.ToolCall{CallID: "app-show", Tool: "mcp__srv__board_show", Arguments: json.RawMessage(`{}`), App: &protocol.CallApp{Server: "srv"}},
		)
		if err != nil {
			t.Fatal(err)
		}
		type outcome struct {
			Decision protocol.Decision
			IsError  bool
			Text     string
		}
		var outcomes []outcome
		for _, r := range results {
			outcomes = append(outcomes, outcome{r.Decision, r.IsError, r.Text()})
		}
		for i, w := range []struct {
			decision protocol.Decision
			isError  bool
			text     string
		}{
			{protocol.DecisionInvalid, true, `is for the app of server "srv" only`},
			{protocol.DecisionAsked, false, "moved"},
			{protocol.DecisionInvalid, true, "an app calls only its own server's tools"},
			{protocol.DecisionInvalid, true, `its _meta.ui.visibility lacks "app"`},
			{protocol.DecisionAllowed, false, "board\nui: [" + "text/html;profile=mcp-app" + "]"},
			{protocol.DecisionAllowed, false, "board"},
		} {
			o := outcomes[i]
			if o.Decision != w.decision || o.IsError != w.isError || !strings.Contains(o.Text, w.text) {
				t.Errorf("call %s: %s %v %q; want %s %v, saying %q", results[i].CallID, o.Decision, o.IsError, o.Text, w.decision, w.isError, w.text)
			}
		}
		if n := len(ed.Prompts()); n != 1 {
			t.Errorf("%d permission prompts; want 1, for the app's board_move alone (an app's call is gated like any)", n)
		} else if app := ed.Prompts()[0].App; app == nil || app.Server != "srv" {
			t.Errorf("the prompt for the app's call says app %+v; want the view of srv, so the user is told a view asks", app)
		}

		rr, err := ed.ReadResource(t.Context(), "srv", view)
		if err != nil {
			t.Fatal(err)
		}
		if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "text/html;profile=mcp-app" || !strings.Contains(rr.Contents[0].Text, "<title>board</title>") {
			t.Errorf("reading %s: %+v; want the view's HTML as text/html;profile=mcp-app", view, rr.Contents)
		}
		// The view's policy is the frontend's to apply: its _meta reaches it as the server sent it.
		if len(rr.Contents) == 1 {
			b, _ := json.Marshal(rr.Contents[0].Meta)
			if want := `{"ui":{"csp":{"connectDomains":["https://api.example.com"]}}}`; string(b) != want {
				t.Errorf("reading %s: _meta %s; want %s", view, b, want)
			}
		}
		res, err := ed.Resources(t.Context(), "srv")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(res, func(r protocol.ResourceInfo) bool {
			return r.URI == view && r.MIMEType == "text/html;profile=mcp-app"
		}) {
			t.Errorf("freecode/resources lists %+v; want %s among them", res, view)
		}

		// An app's call without its server is refused, not taken for a model's.
		_, err = ed.Client.Execute(t.Context(), protocol.ToolCall{CallID: "x", Tool: "mcp__srv__board_move", Arguments: json.RawMessage(`{}`), App: &protocol.CallApp{}})
		if codeOf(err) != -32602 || !strings.Contains(err.Error(), "calls[0].app.server") {
			t.Errorf("an app call naming no server: %v; want -32602 naming calls[0].app.server", err)
		}
	})
}
