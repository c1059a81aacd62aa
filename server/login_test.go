package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/oauthtest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// protected serves a go-sdk MCP server with the read-only tool whoami
// behind the in-process authorization server of setup, and returns the
// authorization server and the config archive naming it as the remote
// server gh, next to the local test server srv.
func protected(t *testing.T, setup oauthtest.Setup) (*oauthtest.Server, string) {
	t.Setenv("FREECODE_TOKEN_STORE", "file") // no keychain in tests
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "1"}, nil)
	server.AddTool(&mcpsdk.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}, Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "you"}}}, nil
		})
	t.Cleanup(func() {
		for ss := range server.Sessions() {
			ss.Close()
		}
	})
	as := oauthtest.New(t, setup, mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil))
	files := fmt.Sprintf("-- config.json --\n"+`{"mcp": {"servers": [{{server "srv"}}, {"name": "gh", "type": "remote", "url": %q, "transport": "http"}]}}`+"\n", as.MCPURL)
	return as, files
}

// shows records the window/showDocument requests of a frontend, and
// answers each by having browser load the page, as an editor does by
// opening it in the user's browser.
type shows struct {
	browser *oauthtest.Browser
	success bool

	mu     sync.Mutex
	params []lsp.ShowDocumentParams
}

func (s *shows) show(ctx context.Context, p *lsp.ShowDocumentParams) (*lsp.ShowDocumentResult, error) {
	s.mu.Lock()
	s.params = append(s.params, *p)
	s.mu.Unlock()
	if !s.success {
		return &lsp.ShowDocumentResult{Success: false}, nil
	}
	return &lsp.ShowDocumentResult{Success: true}, s.browser.Open(ctx, string(p.URI))
}

func (s *shows) got() []lsp.ShowDocumentParams {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]lsp.ShowDocumentParams(nil), s.params...)
}

// noSecretIn fails the test if text holds a token, code or secret the
// authorization server handed out.
func noSecretIn(t *testing.T, as *oauthtest.Server, what, text string) {
	t.Helper()
	for _, s := range as.Secrets() {
		if strings.Contains(text, s) {
			t.Errorf("%s holds a secret of the authorization server: %s…", what, s[:min(len(s), 8)])
		}
	}
}

// A remote server that needs a sign-in is needsAuth; freecode/servers/login
// has the frontend that sent it open the sign-in page (showDocument,
// external), sends it the URL in window/logMessage, and answers once the
// server is connected; its tools then run. No token reaches a frontend or
// the sidecar's log. Logout stops the server and forgets the sign-in: it
// needs one again.
func TestLogin(t *testing.T) {
	as, files := protected(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
	sh := &shows{browser: oauthtest.NewBrowser(t), success: true}
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		st := ed.AwaitStatus("gh", protocol.StateNeedsAuth)
		if st.LastError == "" {
			t.Errorf("needsAuth without a reason: %+v", st)
		}
		before := len(sh.got())
		got, err := ed.Login(t.Context(), "gh")
		if err != nil {
			t.Fatalf("login: %v", err)
		}
		if got.State != protocol.StateConnected || got.ToolCount != 1 {
			t.Errorf("after login: %+v", got)
		}
		shown := sh.got()[before:]
		if len(shown) != 1 || shown[0].External == nil || !*shown[0].External || !strings.HasPrefix(string(shown[0].URI), as.Issuer) {
			t.Fatalf("showDocument requests: %+v", shown)
		}
		lm := ed.AwaitLogMessage(`Sign in to the MCP server "gh"`)
		if !strings.Contains(lm.Message, string(shown[0].URI)) {
			t.Errorf("the logMessage lacks the URL: %q", lm.Message)
		}
		if r := execute(t, ed, call("w1", "mcp__gh__whoami", `{}`)); r.IsError || r.Text() != "you" {
			t.Errorf("whoami after login: %v %q", r.IsError, r.Text())
		}

		st2, err := ed.Logout(t.Context(), "gh")
		if err != nil || st2.State != protocol.StateStopped {
			t.Fatalf("logout: %+v, %v", st2, err)
		}
		if st3, err := ed.StartServer(t.Context(), "gh"); err != nil || st3.State != protocol.StateNeedsAuth {
			t.Errorf("start after logout: %+v, %v; want needsAuth", st3, err)
		}
		noSecretIn(t, as, "the JSON-RPC and sidecar log", env.Log())
	}, servertest.WithEditor(servertest.EditorOptions{ShowDocument: sh.show}))
}

// A frontend that cannot open the page (no showDocument declared, or
// success: false) leaves it to the sidecar's opener, $BROWSER; it is sent
// the URL all the same.
func TestLoginFallsBackToTheBrowser(t *testing.T) {
	for _, tc := range []struct {
		name string
		ed   servertest.EditorOptions
	}{
		{"no showDocument", servertest.EditorOptions{}},
		{"showDocument fails", servertest.EditorOptions{ShowDocument: (&shows{}).show}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as, files := protected(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
			opened := servertest.Browser(t)
			servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
				ed := env.Editor
				ed.AwaitStatus("gh", protocol.StateNeedsAuth)
				before := len(opened())
				got, err := ed.Login(t.Context(), "gh")
				if err != nil || got.State != protocol.StateConnected {
					t.Fatalf("login: %+v, %v", got, err)
				}
				urls := opened()[before:]
				if len(urls) != 1 || !strings.HasPrefix(urls[0], as.Issuer) {
					t.Fatalf("$BROWSER opened %v", urls)
				}
				ed.AwaitLogMessage(urls[0])
			}, servertest.WithEditor(tc.ed))
		})
	}
}

// A denied consent leaves the server in needsAuth, with a status that says
// so and no error; a local server has no sign-in (nor sign-out: it is left
// running); an unknown one is -32001.
func TestLoginRefused(t *testing.T) {
	as, files := protected(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth"})
	sh := &shows{browser: oauthtest.NewBrowser(t), success: true}
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("gh", protocol.StateNeedsAuth)
		as.SetDeny(true)
		defer as.SetDeny(false)
		st, err := ed.Login(t.Context(), "gh")
		if err != nil || st.State != protocol.StateNeedsAuth || !strings.Contains(st.LastError, "access_denied") {
			t.Errorf("a denied login: %+v, %v", st, err)
		}
		ed.AwaitStatus("srv", protocol.StateConnected)
		if _, err := ed.Login(t.Context(), "srv"); codeOf(err) != jsonrpc2.InvalidRequest {
			t.Errorf("login to a local server: %v, want -32600", err)
		}
		if _, err := ed.Logout(t.Context(), "srv"); codeOf(err) != jsonrpc2.InvalidRequest {
			t.Errorf("logout of a local server: %v, want -32600", err)
		}
		sts, err := ed.Servers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range sts {
			if st.Name == "srv" && st.State != protocol.StateConnected {
				t.Errorf("srv after the refused logout: %+v", st)
			}
		}
		if _, err := ed.Login(t.Context(), "nope"); codeOf(err) != protocol.CodeNoSuchServer {
			t.Errorf("login to an unknown server: %v, want -32001", err)
		}
		if _, err := ed.Login(t.Context(), ""); codeOf(err) != protocol.CodeInvalidParams {
			t.Errorf("login without a name: %v, want -32602", err)
		}
	}, servertest.WithEditor(servertest.EditorOptions{ShowDocument: sh.show}))
}

// A server that asks for more access in a live session (403
// insufficient_scope) has the page opened by the frontend whose call met
// the demand, not by the one that signed in; the call then goes through.
func TestStepUpAsksTheCallingFrontend(t *testing.T) {
	as, files := protected(t, oauthtest.Setup{PRM: "header", ASMeta: "oauth", ChallengeScopes: []string{"read"}, WriteScope: "write"})
	browser := oauthtest.NewBrowser(t)
	servertest.Run(t, files, func(t *testing.T, env *servertest.Env) {
		sh1 := &shows{browser: browser, success: true}
		sh2 := &shows{browser: browser, success: true}
		one := env.Connect("one", &servertest.EditorOptions{ShowDocument: sh1.show})
		two := env.Connect("two", &servertest.EditorOptions{ShowDocument: sh2.show})
		one.AwaitStatus("gh", protocol.StateNeedsAuth)
		if st, err := one.Login(t.Context(), "gh"); err != nil || st.State != protocol.StateConnected {
			t.Fatalf("login: %+v, %v", st, err)
		}
		if r := execute(t, two, call("w1", "mcp__gh__whoami", `{}`)); r.IsError || r.Text() != "you" {
			t.Errorf("whoami needing more access: %v %q", r.IsError, r.Text())
		}
		if n1, n2 := len(sh1.got()), len(sh2.got()); n1 != 1 || n2 != 1 {
			t.Errorf("pages opened: %d by the frontend that signed in, %d by the one that called; want 1 and 1", n1, n2)
		}
		two.AwaitLogMessage("asks for more access")
		noSecretIn(t, as, "the JSON-RPC and sidecar log", env.Log())
	}, servertest.Modes(servertest.MultiModes))
}
