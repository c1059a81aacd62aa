package mcp

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// A server that logs sends what the level asks for: under the older
// protocol after logging/setLevel, under the newest from the level in each
// request's _meta. SetLogLevel changes it on the live session.
func TestLogLevel(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s := newMemServer(t, "logger")
			s.AddTool(&mcpsdk.Tool{Name: "log", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				for _, l := range []mcpsdk.LoggingLevel{"debug", "info", "warning", "error"} {
					if err := req.Session.Log(ctx, &mcpsdk.LoggingMessageParams{Level: l, Data: string(l)}); err != nil {
						return nil, err
					}
				}
				return answer("logged"), nil
			})
			var (
				mu   sync.Mutex
				seen []string
				last = make(chan struct{}, 8) // an "error" line ends each call's logs
			)
			c := newTestConnOpts(t, pinned("m", v), nil, &ConnOptions{
				Dial:     s.Dial,
				LogLevel: "warning",
				ClientOptions: func(_ config.Server, o *mcpsdk.ClientOptions) {
					o.LoggingMessageHandler = func(_ context.Context, req *mcpsdk.LoggingMessageRequest) {
						mu.Lock()
						seen = append(seen, string(req.Params.Level))
						mu.Unlock()
						if req.Params.Level == "error" {
							last <- struct{}{}
						}
					}
				},
			})
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			logged := func() []string {
				t.Helper()
				callText(t, c, "log", nil)
				<-last
				mu.Lock()
				defer mu.Unlock()
				out := seen
				seen = nil
				return out
			}
			if diff := cmp.Diff([]string{"warning", "error"}, logged()); diff != "" {
				t.Errorf("at warning (-want +got):\n%s", diff)
			}
			c.SetLogLevel("debug")
			if v != "" {
				// setLevel is sent off the caller's goroutine: let it land.
				s.AwaitRequests(t.Context(), "logging/setLevel", 2)
			}
			if diff := cmp.Diff([]string{"debug", "info", "warning", "error"}, logged()); diff != "" {
				t.Errorf("at debug (-want +got):\n%s", diff)
			}
		})
	}
}
