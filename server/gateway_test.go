package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// gatewayClient is an HTTP client that sends token as a bearer token; its
// connections close with the test.
func gatewayClient(t *testing.T, token string) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: bearerRT{token: token, next: tr}}
}

type bearerRT struct {
	token string
	next  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// openGateway sends freecode/gateway/open.
func openGateway(t *testing.T, c *frontend.Client) protocol.GatewayResult {
	t.Helper()
	var res protocol.GatewayResult
	if err := c.Call(t.Context(), protocol.MethodGatewayOpen, struct{}{}, &res); err != nil {
		t.Fatalf("%s: %v", protocol.MethodGatewayOpen, err)
	}
	return res
}

// connectGateway connects the go-sdk's client to a server's endpoint.
func connectGateway(t *testing.T, url, token string, opts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
	t.Helper()
	c := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "Visual Studio Code", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), &mcpsdk.StreamableClientTransport{Endpoint: url, HTTPClient: gatewayClient(t, token), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcpsdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func resultText(r *mcpsdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// freecode/gateway/open serves VS Code's chat from the sidecar's own
// servers: one endpoint per server whose tools can come, its tools under
// their own names, every call through the sidecar's rules, behind one
// token; a server the config gains gets its endpoint without a restart.
func TestGatewayOpen(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}, {"name": "off", "type": "local", "command": ["/nonexistent"], "enabled": false}]}}
-- settings.json --
{"permissions": {"deny": ["mcp__a__write"]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		before := ed.AwaitStatus("a", protocol.StateConnected)
		res := openGateway(t, ed.Client)
		if len(res.Token) < 32 || len(res.Servers) != 1 || res.Servers[0].Name != "a" ||
			!strings.HasPrefix(res.Servers[0].URL, "http://127.0.0.1:") || !strings.HasSuffix(res.Servers[0].URL, "/mcp/a") {
			t.Fatalf("gateway/open: %+v; want a's endpoint alone (off is disabled)", res)
		}
		url := res.Servers[0].URL

		// The token first, whatever the path.
		for _, tc := range []struct {
			name, url, token string
			want             int
		}{
			{"no token", url, "", http.StatusUnauthorized},
			{"wrong token", url, "not-the-token", http.StatusUnauthorized},
			{"no token, unknown server", strings.TrimSuffix(url, "a") + "nope", "", http.StatusUnauthorized},
			{"unknown server", strings.TrimSuffix(url, "a") + "nope", res.Token, http.StatusNotFound},
		} {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, tc.url, strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := gatewayClient(t, tc.token).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s: %s, want %d", tc.name, resp.Status, tc.want)
			}
		}

		cs := connectGateway(t, url, res.Token, nil)
		want := []string{"addprompt", "addresource", "addtool", "block", "caps", "crash", "echo", "elicit", "elicit_url",
			"mcplog", "progress", "roots", "sample", "say", "write"}
		if diff := cmp.Diff(want, toolNames(t, cs)); diff != "" {
			t.Errorf("a's tools at its endpoint (-want +got):\n%s", diff)
		}
		r, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || r.IsError || resultText(r) != "hi" || r.Meta["freecode/decision"] != "allowed" {
			t.Errorf("echo: %+v, %v", r, err)
		}
		r, err = cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "write", Arguments: map[string]any{"text": "hi"}})
		if err != nil || !r.IsError || r.Meta["freecode/decision"] != "denied" || !strings.Contains(resultText(r), `denied by rule "mcp__a__write"`) {
			t.Errorf("write, denied by the rules: %+v, %v", r, err)
		}
		// The call ran on the sidecar's own server: the same process.
		sts, err := ed.Servers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(sts, func(s protocol.ServerStatus) bool { return s.Name == "a" }); i < 0 || before.PID == 0 || sts[i].PID != before.PID {
			t.Errorf("a's process: %d before the gateway's calls, now %+v", before.PID, sts)
		}

		// Asked again, the same listener and token.
		if again := openGateway(t, ed.Client); again.Token != res.Token || !slices.Equal(again.Servers, res.Servers) {
			t.Errorf("gateway/open again: %+v, want %+v", again, res)
		}

		// A server added to the config has its endpoint at once, and the
		// one already open is told nothing of it.
		env.Sandbox.WriteFile(t, "config.json", servertest.Expand(t, `{"mcp": {"servers": [{{server "a"}}, {{server "b"}}]}}`))
		ed.AwaitStatus("b", protocol.StateConnected)
		res = openGateway(t, ed.Client)
		var names []string
		for _, s := range res.Servers {
			names = append(names, s.Name)
		}
		if diff := cmp.Diff([]string{"a", "b"}, names); diff != "" {
			t.Fatalf("servers after b was added (-want +got):\n%s", diff)
		}
		csb := connectGateway(t, res.Servers[1].URL, res.Token, nil)
		if names := toolNames(t, csb); !slices.Contains(names, "echo") {
			t.Errorf("b's tools: %v", names)
		}
	})
}

// The endpoint's list follows its server: empty while it is stopped,
// filled when it connects again, with tools/list_changed each time.
func TestGatewayListChanged(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("a", protocol.StateConnected)
		res := openGateway(t, ed.Client)
		changed := make(chan struct{}, 64)
		cs := connectGateway(t, res.Servers[0].URL, res.Token, &mcpsdk.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) { changed <- struct{}{} },
		})
		until := func(what string, ok func([]string) bool) {
			t.Helper()
			for !ok(toolNames(t, cs)) {
				select {
				case <-changed:
				case <-t.Context().Done():
					t.Fatalf("no tools/list_changed: %s", what)
				}
			}
		}
		if _, err := ed.StopServer(t.Context(), "a"); err != nil {
			t.Fatal(err)
		}
		until("a stopped", func(names []string) bool { return len(names) == 0 })
		if _, err := ed.StartServer(t.Context(), "a"); err != nil {
			t.Fatal(err)
		}
		until("a connected again", func(names []string) bool { return slices.Contains(names, "echo") })
	})
}

// A browser's tab may not open the gateway.
func TestGatewayOpenBrowser(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": []}}
`, func(t *testing.T, env *servertest.Env) {
		err := env.Editor.Call(t.Context(), protocol.MethodGatewayOpen, struct{}{}, nil)
		if err == nil || !strings.Contains(err.Error(), "browser") {
			t.Errorf("a tab opening the gateway: %v, want it refused", err)
		}
	}, servertest.Modes(servertest.WebSocket))
}
