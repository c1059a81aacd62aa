package workspace

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/oauthtest"
)

// TestLoginKeepsTokensBesideConfig: a remote server that needs a sign-in is
// needsAuth, not failed; Login signs in through the given opener and
// connects it; the tokens are kept beside the workspace's config file (not
// in the user's ~/.freecode, which a --config run must not touch); Logout
// stops it and deletes them.
func TestLoginKeepsTokensBesideConfig(t *testing.T) {
	t.Setenv("FREECODE_TOKEN_STORE", "file") // no keychain in tests
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "1"}, nil)
	server.AddTool(&mcpsdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "you"}}}, nil
		})
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	as := oauthtest.New(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"},
		mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil))

	e := newEnv(t)
	writeJSON(t, e.cfgPath, mcpSection([]map[string]any{{"name": "gh", "type": "remote", "url": as.MCPURL, "transport": "http"}}, nil))
	w := e.open(t)
	sub := w.Subscribe(nil)
	defer sub.Close()
	// The server may be needsAuth before the subscription: look, then
	// wait for it if not.
	if st, _ := w.status("gh"); st.State.String() != "needsAuth" {
		await(t, sub, "gh needing a sign-in", statusIs("gh", "needsAuth"))
	}

	browser := oauthtest.NewBrowser(t)
	st, err := w.Login(t.Context(), "gh", browser.Open)
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	if st.State.String() != "connected" || st.ToolCount != 1 || browser.Opens() != 1 {
		t.Errorf("after Login: state %v, %d tools, browser opened %d times; want connected, 1, 1", st.State, st.ToolCount, browser.Opens())
	}
	tokens := filepath.Join(e.dir, "auth", "tokens.json")
	if fi, err := os.Stat(tokens); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("tokens beside the config: %v, %v; want a 0600 file", fi, err)
	}
	if r := call(t, w, "mcp__gh__whoami", `{}`, allowOnce); r.IsError || r.Text() != "you" {
		t.Errorf("call after sign-in: %v %q", r.IsError, r.Text())
	}

	st, err = w.Logout(t.Context(), "gh")
	if err != nil || st.State.String() != "stopped" {
		t.Errorf("Logout: %v, state %v; want stopped", err, st.State)
	}
	data, err := os.ReadFile(tokens)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, s := range as.Secrets() {
		if strings.Contains(string(data), s) {
			t.Errorf("a token is still stored after Logout: %s…", s[:min(len(s), 12)])
		}
	}
}
