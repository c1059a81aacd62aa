package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// TestLostAnswerReachesTheFrontend: a call whose answer the server lost
// reaches the frontend as "outcome unknown, not retried", marked
// outcomeUnknown, when its tool is a write; an idempotent one was sent
// again and answered.
func TestLostAnswerReachesTheFrontend(t *testing.T) {
	srv := mcptest.NewLossyServer(t, &mcptest.LossyOptions{Stateless: true})
	files := fmt.Sprintf("-- config.json --\n{\"mcp\": {\"servers\": [{\"name\": \"l\", \"type\": \"remote\", \"url\": %q, \"transport\": \"http\"}]}}\n", srv.URL)
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		if st := ed.AwaitStatus("l", protocol.StateConnected); st.ProtocolVersion != "2026-07-28" {
			t.Errorf("connected at %q; want 2026-07-28", st.ProtocolVersion)
		}
		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		results, err := ed.Client.Execute(t.Context(),
			protocol.ToolCall{CallID: "w", Tool: "mcp__l__write", Arguments: json.RawMessage(`{}`)},
			protocol.ToolCall{CallID: "p", Tool: "mcp__l__put", Arguments: json.RawMessage(`{}`)},
		)
		if err != nil {
			t.Fatal(err)
		}
		w, p := results[0], results[1]
		if !w.OutcomeUnknown || !w.IsError || !strings.Contains(w.Text(), "outcome unknown, not retried") {
			t.Errorf("write: %+v; want outcomeUnknown and the words", w)
		}
		if p.OutcomeUnknown || p.IsError {
			t.Errorf("put: %+v; want its retry's answer", p)
		}
		if got := srv.Calls("write"); got != 1 {
			t.Errorf("the server ran write %d times; want 1", got)
		}
		if got := srv.Calls("put"); got != 2 {
			t.Errorf("the server ran put %d times; want 2", got)
		}
	}, servertest.Modes(servertest.Stdio)) // the server loses only the first answer of each tool
}
