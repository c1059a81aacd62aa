package workspace

import (
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/mcptest"
	"github.com/freecode/freecode/orchestrator"
)

// TestLostAnswerRetriedOnlyIfReplaySafe: a call whose answer is lost (the
// response stream breaks mid-call, or the connection drops before the
// answer) is sent again only for a read-only or idempotent tool; a write
// is reported "outcome unknown, not retried", and its server saw it once.
// Both under 2026-07-28, which has no resumable streams, and 2025-11-25.
func TestLostAnswerRetriedOnlyIfReplaySafe(t *testing.T) {
	for _, tc := range []struct {
		name          string
		version       string
		beforeHeaders bool
	}{
		{"2026-07-28, stream breaks", "2026-07-28", false},
		{"2026-07-28, no answer at all", "2026-07-28", true},
		{"2025-11-25, stream breaks", "2025-11-25", false},
		{"2025-11-25, no answer at all", "2025-11-25", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcptest.NewLossyServer(t, &mcptest.LossyOptions{BreakBeforeHeaders: tc.beforeHeaders, Stateless: tc.version == "2026-07-28"})
			entry := map[string]any{"name": "b", "type": "remote", "url": srv.URL, "transport": "http"}
			e := newEnv(t)
			writeJSON(t, e.cfgPath, mcpSection([]map[string]any{entry}, nil))
			w := e.open(t)
			settle(t, w)
			if st, _ := w.status("b"); st.State.String() != "connected" || st.ProtocolVersion != tc.version {
				t.Fatalf("server b: %v at %q (%s); want connected at %s", st.State, st.ProtocolVersion, st.LastError, tc.version)
			}
			for _, want := range []struct {
				tool    string
				calls   int
				unknown bool
			}{
				{"write", 1, true},
				{"put", 2, false},
				{"read", 2, false},
			} {
				r := call(t, w, "mcp__b__"+want.tool, `{}`, allowOnce)
				if got := srv.Calls(want.tool); got != want.calls {
					t.Errorf("%s: the server saw %d calls; want %d (result %q)", want.tool, got, want.calls, r.Text())
				}
				if r.OutcomeUnknown != want.unknown || r.IsError != want.unknown {
					t.Errorf("%s: outcomeUnknown %v, isError %v; want %v, %v: %q", want.tool, r.OutcomeUnknown, r.IsError, want.unknown, want.unknown, r.Text())
				}
				if has := strings.Contains(r.Text(), orchestrator.OutcomeUnknownText); has != want.unknown {
					t.Errorf("%s: %q; want it to say %q: %v", want.tool, r.Text(), orchestrator.OutcomeUnknownText, want.unknown)
				}
			}
		})
	}
}
