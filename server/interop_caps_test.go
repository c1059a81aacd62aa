package server_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// everythingConfig is a config archive with server-everything, from npm, as
// the server everything; the test is skipped without $FREECODE_NPM.
func everythingConfig(t *testing.T) string {
	t.Helper()
	script := filepath.Join(servertest.NPMDir(t), "@modelcontextprotocol", "server-everything", "dist", "index.js")
	return fmt.Sprintf(`
-- config.json --
{"mcp": {"servers": [{"name": "everything", "type": "local", "command": ["node", %q, "stdio"], "timeout": 30000}]}}
`, script)
}

// server-everything, from npm, through the sidecar, answered by a scripted
// frontend: it offers its elicitation and sampling tools (the frontend
// declared both), whose questions reach the frontend and whose answers
// reach the server (a form's default filled in); its resources and prompts
// are listed, read and got; a resource it adds is told; its MCP log
// messages arrive as freecode/servers/log.
func TestInteropEverythingThroughTheSidecar(t *testing.T) {
	files := everythingConfig(t)
	var a asked
	editor := servertest.EditorOptions{
		Elicit: a.elicit(protocol.ElicitAccept, map[string]any{"name": "Ada Lovelace", "check": true}),
		Sample: a.sample("scripted-model", "forty-two"),
	}
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("everything", protocol.StateConnected)
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		tools, err := ed.Tools(t.Context(), "everything")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"trigger-elicitation-request", "trigger-sampling-request"} {
			if !slices.ContainsFunc(tools, func(ti protocol.ToolInfo) bool { return ti.Name == name }) {
				t.Fatalf("no %s among the tools: the capability was not declared", name)
			}
		}
		elicits, samples := a.got()

		r := execute(t, ed, call("el", "mcp__everything__trigger-elicitation-request", `{}`))
		// 42 is the schema's default of a field the answer left out.
		if r.IsError || !strings.Contains(r.Text(), "Name: Ada Lovelace") || !strings.Contains(r.Text(), "Favorite Integer: 42") {
			t.Errorf("elicitation: %s", r.Text())
		}
		got, _ := a.got()
		if got = got[len(elicits):]; len(got) != 1 || got[0].Server != "everything" || got[0].Mode != protocol.ElicitForm ||
			!strings.Contains(string(got[0].RequestedSchema), `"firstLine"`) || got[0].Message == "" {
			t.Errorf("the elicitation the frontend got: %+v", got)
		}

		r = execute(t, ed, call("sa", "mcp__everything__trigger-sampling-request", `{"prompt":"the answer?","maxTokens":20}`))
		if r.IsError || !strings.Contains(r.Text(), "scripted-model") || !strings.Contains(r.Text(), "forty-two") {
			t.Errorf("sampling: %s", r.Text())
		}
		_, gotS := a.got()
		if gotS = gotS[len(samples):]; len(gotS) != 1 || gotS[0].CallID != "sa" ||
			!strings.Contains(string(gotS[0].Params), "the answer?") || !strings.Contains(string(gotS[0].Params), `"maxTokens":20`) {
			t.Errorf("the sampling request the frontend got: %+v", gotS)
		}

		res, err := ed.Resources(t.Context(), "everything")
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res, func(r protocol.ResourceInfo) bool { return r.Name == "architecture.md" })
		if i < 0 || res[i].MIMEType != "text/markdown" {
			t.Fatalf("resources: %+v", res)
		}
		rr, err := ed.ReadResource(t.Context(), "everything", res[i].URI)
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == "" {
			t.Errorf("read %s: %+v, %v", res[i].URI, rr, err)
		}
		prompts, err := ed.Client.Prompts(t.Context(), "everything")
		if err != nil {
			t.Fatal(err)
		}
		if j := slices.IndexFunc(prompts, func(p protocol.PromptInfo) bool { return p.Name == "args-prompt" }); j < 0 ||
			len(prompts[j].Arguments) != 2 || !prompts[j].Arguments[0].Required {
			t.Errorf("prompts: %+v", prompts)
		}
		gp, err := ed.GetPrompt(t.Context(), "everything", "args-prompt", map[string]string{"city": "Paris"})
		if err != nil || len(gp.Messages) != 1 || !strings.Contains(string(gp.Messages[0].Content), "Paris") {
			t.Errorf("args-prompt: %+v, %v", gp, err)
		}

		if r := execute(t, ed, call("gz", "mcp__everything__gzip-file-as-resource",
			`{"name":"hello.gz","data":"data:text/plain;base64,aGVsbG8="}`)); r.IsError {
			t.Fatalf("gzip: %s", r.Text())
		}
		awaitListChanged(ed, protocol.NotifyResourcesChanged, "everything", "listChanged")
		if res, _ := ed.Resources(t.Context(), "everything"); !slices.ContainsFunc(res, func(r protocol.ResourceInfo) bool { return r.Name == "hello.gz" }) {
			t.Errorf("after list_changed the resources lack hello.gz")
		}

		// Its simulated logging: random levels, the first at once, one every
		// 5 s; a debug one is below mcp.logLevel (info) and not sent.
		if r := execute(t, ed, call("lg", "mcp__everything__toggle-simulated-logging", `{}`)); r.IsError {
			t.Fatalf("toggle-simulated-logging: %s", r.Text())
		}
		n := ed.Await("log everything", "an MCP log message of everything", func(n frontend.Notification) bool {
			var l protocol.ServerLog
			return n.Method == protocol.NotifyServersLog && json.Unmarshal(n.Params, &l) == nil && l.Name == "everything" &&
				l.Source == protocol.SourceMCP && strings.Contains(l.Message, "-level message")
		})
		var l protocol.ServerLog
		if err := n.Decode(&l); err != nil || l.Level == protocol.LevelDebug {
			t.Errorf("log line %+v: a debug message passed the info level", l)
		}
		if r := execute(t, ed, call("lg2", "mcp__everything__toggle-simulated-logging", `{}`)); r.IsError {
			t.Errorf("toggling the logging off: %s", r.Text())
		}
	}, servertest.WithEditor(editor))
}
