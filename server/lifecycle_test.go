package server_test

import (
	"testing"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

func TestSmoke(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "srv"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		st := ed.AwaitStatus("srv", protocol.StateConnected)
		t.Logf("%+v", st)
		tools, err := ed.Tools(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d tools", len(tools))
		rs, err := ed.Execute(t.Context(), protocol.ToolCall{CallID: "c1", Tool: "mcp__srv__echo", Arguments: []byte(`{"text":"hi"}`)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v %s", rs, rs[0].Text())
	})
}
