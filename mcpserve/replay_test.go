package mcpserve

import (
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptest"
)

// TestLostAnswerThroughTheGateway: the gateway's calls follow the one
// retry rule. A write whose answer its server lost reaches the gateway's
// client as "outcome unknown, not retried", marked in _meta, run once; an
// idempotent call is sent again and answered.
func TestLostAnswerThroughTheGateway(t *testing.T) {
	lossy := mcptest.NewLossyServer(t, &mcptest.LossyOptions{Stateless: true})
	e := newEnv(t, []map[string]any{{"name": "l", "type": "remote", "url": lossy.URL, "transport": "http"}}, nil)
	e.open(t)
	cs := e.connect(t, &mcpsdk.ClientOptions{ElicitationHandler: answer("accept", choiceAllowOnce, nil)})

	w := callTool(t, cs, "mcp__l__write", `{}`)
	if !w.IsError || w.Meta["freecode/outcomeUnknown"] != true || !strings.Contains(resultText(w), "outcome unknown, not retried") {
		t.Errorf("write: isError %v, _meta %v, %q; want the outcome unknown, in words and in _meta", w.IsError, w.Meta, resultText(w))
	}
	if n := lossy.Calls("write"); n != 1 {
		t.Errorf("the server ran write %d times; want 1", n)
	}
	p := callTool(t, cs, "mcp__l__put", `{}`)
	if p.IsError || resultText(p) != "put ran, call 2" || p.Meta["freecode/outcomeUnknown"] != nil {
		t.Errorf("put: isError %v, _meta %v, %q; want the retry's answer", p.IsError, p.Meta, resultText(p))
	}
}
