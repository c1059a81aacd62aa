package mcp

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
)

// viewURI is the view addView serves.
const viewURI = "ui://test/view.html"

// addView adds an MCP Apps view whose _meta.ui.csp asks for the network:
// an exfiltration host, an allowed one, another port of it.
func addView(server *mcpsdk.Server) {
	server.AddResource(&mcpsdk.Resource{URI: viewURI, Name: "view", MIMEType: AppMIMEType},
		func(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{
				URI: viewURI, MIMEType: AppMIMEType, Text: "<html><body>view</body></html>",
				Meta: mcpsdk.Meta{"ui": map[string]any{"csp": map[string]any{
					"connectDomains":  []any{"https://exfil.example", "https://api.example.com"},
					"resourceDomains": []any{"https://*.exfil.example"},
					"frameDomains":    []any{"https://api.example.com:8443"},
				}}},
			}}}, nil
		})
}

// A view's network does not exceed its server's: under "network": "none"
// its _meta.ui.csp names no origin, under an allow-list only the origins
// the list reaches (port included), each left-out origin is said with
// why; an unsandboxed server's view keeps what it declared.
func TestViewReachWithinSandbox(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, b *config.Sandbox) (map[string]any, []string) {
		t.Helper()
		if b != nil {
			needBwrap(t)
		}
		c := NewConn(config.Server{
			Name: "v", Type: config.TypeLocal, Enabled: true, Timeout: time.Minute, Cwd: t.TempDir(),
			Command: []string{exe, "view"}, Env: map[string]string{testServerEnv: "1"}, Sandbox: b,
		}, &ConnOptions{NoRetry: true})
		defer c.Close()
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		res, err := c.ReadResource(t.Context(), viewURI, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := res.Contents[0].Meta
		var dropped []string
		if r, ok := m[ViewReachKey].(map[string]any); ok {
			for _, d := range r["dropped"].([]any) {
				dropped = append(dropped, d.(string))
			}
		}
		return m["ui"].(map[string]any)["csp"].(map[string]any), dropped
	}
	list := func(csp map[string]any, key string) []string {
		var out []string
		for _, o := range csp[key].([]any) {
			out = append(out, o.(string))
		}
		return out
	}

	csp, dropped := read(t, &config.Sandbox{Network: config.NetworkNone})
	for _, key := range []string{"connectDomains", "resourceDomains", "frameDomains"} {
		if got := list(csp, key); len(got) != 0 {
			t.Errorf(`network "none": %s %v`, key, got)
		}
	}
	if len(dropped) != 4 || !strings.Contains(dropped[0], "connectDomains: https://exfil.example: outside the server's sandbox, which has no network") {
		t.Errorf(`network "none": dropped %q`, dropped)
	}

	csp, dropped = read(t, &config.Sandbox{Network: config.NetworkDomains, AllowedDomains: []string{"api.example.com"}})
	if got := list(csp, "connectDomains"); !slices.Equal(got, []string{"https://api.example.com"}) {
		t.Errorf("allow-list: connectDomains %v", got)
	}
	if got := list(csp, "frameDomains"); len(got) != 0 {
		t.Errorf("allow-list: frameDomains %v (another port)", got)
	}
	if len(dropped) != 3 {
		t.Errorf("allow-list: dropped %q", dropped)
	}

	csp, dropped = read(t, nil)
	if got := list(csp, "connectDomains"); len(got) != 2 || dropped != nil {
		t.Errorf("unsandboxed: connectDomains %v, dropped %q", got, dropped)
	}
}
