package mcpserve

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 client is asked by an input_required result: the form and
// a requestState, no content; the call made again with the answer and that
// state runs, once. A state that is not the server's, or is another
// call's, or was used, denies; an answer without a state asks again.
func TestInputRequired(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	// The client's own round trip is off: the test makes each round.
	cs := e.connectAt(t, &mcpsdk.ClientOptions{
		ElicitationHandler: answer("accept", choiceAllowOnce, nil),
		MultiRoundTrip:     &mcpsdk.MultiRoundTripOptions{Disabled: true},
	}, "2026-07-28")
	call := func(t *testing.T, args string, responses mcpsdk.InputResponseMap, state string) *mcpsdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "mcp__srv__write", Arguments: json.RawMessage(args),
			InputResponses: responses, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ask := func(t *testing.T, args string) (*mcpsdk.ElicitParams, string) {
		t.Helper()
		res := call(t, args, nil, "")
		p, ok := res.InputRequests[askInputKey].(*mcpsdk.ElicitParams)
		if !res.NeedsInput() || !ok || res.RequestState == "" || len(res.Content) > 0 {
			t.Fatalf("want an input_required result with the form and a requestState; got %+v", res)
		}
		return p, res.RequestState
	}
	allow := mcpsdk.InputResponseMap{askInputKey: &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": choiceAllowOnce}}}
	wantDenied := func(t *testing.T, r *mcpsdk.CallToolResult, text string) {
		t.Helper()
		if r.NeedsInput() || !r.IsError || r.Meta["freecode/decision"] != "denied" || !strings.Contains(resultText(r), text) {
			t.Errorf("want a denial containing %q; got isError %v, decision %v, text %q", text, r.IsError, r.Meta["freecode/decision"], resultText(r))
		}
	}

	p, state := ask(t, `{"text":"hi"}`)
	if !strings.Contains(p.Message, "mcp__srv__write") || p.Mode != "form" {
		t.Errorf("form %+v", p)
	}
	if diff := cmp.Diff([]string{"allowOnce", "deny"}, choicesOf(t, p)); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
	if r := call(t, `{"text":"hi"}`, allow, state); r.IsError || r.Meta["freecode/decision"] != "asked" || resultText(r) != "wrote hi" {
		t.Errorf("allowed once: isError %v, decision %v, text %q", r.IsError, r.Meta["freecode/decision"], resultText(r))
	}
	t.Run("replayed", func(t *testing.T) {
		wantDenied(t, call(t, `{"text":"hi"}`, allow, state), "used already")
	})
	t.Run("other arguments", func(t *testing.T) {
		_, state := ask(t, `{"text":"hi"}`)
		wantDenied(t, call(t, `{"text":"rm -rf ~"}`, allow, state), "not this server's question about this call")
	})
	t.Run("tampered", func(t *testing.T) {
		_, state := ask(t, `{"text":"hi"}`)
		b := []byte(state)
		b[len(b)/2] ^= 1
		wantDenied(t, call(t, `{"text":"hi"}`, allow, string(b)), "not this server's question")
	})
	t.Run("denied in the form", func(t *testing.T) {
		_, state := ask(t, `{"text":"hi"}`)
		deny := mcpsdk.InputResponseMap{askInputKey: &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": choiceDeny}}}
		wantDenied(t, call(t, `{"text":"hi"}`, deny, state), "denied by the user")
	})
	t.Run("declined", func(t *testing.T) {
		_, state := ask(t, `{"text":"hi"}`)
		wantDenied(t, call(t, `{"text":"hi"}`, mcpsdk.InputResponseMap{askInputKey: &mcpsdk.ElicitResult{Action: "decline"}}, state), "denied by the user")
	})
	t.Run("answer without state asks again", func(t *testing.T) {
		if r := call(t, `{"text":"hi"}`, allow, ""); !r.NeedsInput() {
			t.Errorf("want the question again; got %+v", r)
		}
	})
	t.Run("too long to show", func(t *testing.T) {
		args := `{"file":"` + strings.Repeat("x", 3*maxShownArgs) + `","text":"rm -rf ~"}`
		p, state := ask(t, args)
		if diff := cmp.Diff([]string{"deny"}, choicesOf(t, p)); diff != "" {
			t.Errorf("choices (-want +got):\n%s", diff)
		}
		wantDenied(t, call(t, args, allow, state), "too large to be shown whole")
	})
}

// A 2026-07-28 client that cannot be sent a form is denied with the rule to
// add, as an older one is.
func TestInputRequiredNoElicitation(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	cs := e.connectAt(t, nil, "2026-07-28")
	r := callTool(t, cs, "mcp__srv__write", `{"text":"hi"}`)
	if r.NeedsInput() || !r.IsError || !strings.Contains(resultText(r), `add "mcp__srv__write" to permissions.allow`) {
		t.Errorf("isError %v, text %q; want the denial naming the rule", r.IsError, resultText(r))
	}
}

// post sends one JSON-RPC message to url with headers and returns the
// response's status, headers and body.
func post(t *testing.T, url, body string, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// meta2026 is the per-request _meta of a 2026-07-28 client.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// One endpoint serves each request by its revision: 2026-07-28 without a
// session, its headers checked and its lists with caching hints; the
// older revisions' initialize with a session.
func TestHTTPRevisions(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	url := e.serveHTTP(t, "")
	h2026 := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}

	status, hdr, body := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta2026+`}}`, h2026)
	if status != http.StatusOK || hdr.Get("Mcp-Session-Id") != "" {
		t.Fatalf("tools/list at 2026-07-28: %d, session %q: %s", status, hdr.Get("Mcp-Session-Id"), body)
	}
	for _, want := range []string{`"ttlMs":60000`, `"cacheScope":"private"`, `"mcp__srv__echo"`} {
		if !strings.Contains(body, want) {
			t.Errorf("tools/list at 2026-07-28 lacks %s: %s", want, body)
		}
	}
	status, _, body = post(t, url, `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{`+meta2026+`}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
	if status != http.StatusOK || !strings.Contains(body, `"supportedVersions":["2026-07-28","2025-11-25"`) || !strings.Contains(body, `"cacheScope":"private"`) {
		t.Errorf("server/discover: %d %s", status, body)
	}

	refusals := []struct {
		name    string
		body    string
		headers map[string]string
		code    string
	}{
		// Without the header, the request goes by its _meta.
		{"no protocol version header", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta2026 + `}}`,
			map[string]string{"Mcp-Method": "tools/list"}, "-32020"},
		{"Mcp-Method not the method", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + meta2026 + `}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}, "-32020"},
		{"Mcp-Name not the tool", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp__srv__echo","arguments":{"text":"x"},` + meta2026 + `}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "mcp__srv__write"}, "-32020"},
		{"initialize at 2026-07-28", `{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"t","version":"1"},` + meta2026 + `}}`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "initialize"}, "-32601"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := post(t, url, tc.body, tc.headers)
			if status/100 != 4 || !strings.Contains(body, `"code":`+tc.code) {
				t.Errorf("%d %s; want a 4xx with error %s", status, body, tc.code)
			}
		})
	}

	// An older client's initialize starts a session, which its next
	// requests name.
	status, hdr, body = post(t, url, initializeBody, nil)
	sid := hdr.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d, session %q: %s", status, sid, body)
	}
	old := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, old)
	status, _, body = post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, old)
	if status != http.StatusOK || !strings.Contains(body, `"mcp__srv__echo"`) {
		t.Errorf("tools/list in the session: %d %s", status, body)
	}
}

// The legacy HTTP+SSE transport serves the same tools, behind the same
// checks.
func TestLegacySSE(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	token := NewToken()
	url := strings.TrimSuffix(e.serveHTTP(t, token), Path) + SSEPath
	c := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "sse-client", Version: "1"}, &mcpsdk.ClientOptions{
		ElicitationHandler: answer("accept", choiceAllowOnce, nil),
	})
	cs, err := c.Connect(t.Context(), &mcpsdk.SSEClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}},
		&mcpsdk.ClientSessionOptions{ProtocolVersion: "2024-11-05"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2024-11-05" {
		t.Errorf("negotiated %s, want 2024-11-05", got)
	}
	if r := callTool(t, cs, "mcp__srv__echo", `{"text":"over sse"}`); r.IsError || resultText(r) != "over sse" {
		t.Errorf("echo: %+v", r)
	}
	if r := callTool(t, cs, "mcp__srv__write", `{"text":"hi"}`); r.IsError || r.Meta["freecode/decision"] != "asked" {
		t.Errorf("write, asked by elicitation: %s (%v)", resultText(r), r.Meta)
	}

	checks := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"foreign origin", map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}, http.StatusForbidden},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				req, err := http.NewRequestWithContext(t.Context(), method, url+"?sessionid=x", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Accept", "text/event-stream")
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.want {
					t.Errorf("%s: %d, want %d", method, resp.StatusCode, tc.want)
				}
			}
		})
	}
	t.Run("other host", func(t *testing.T) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "rebind.example:80"
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%d, want 403", resp.StatusCode)
		}
	})
}

// A permission question outlives a restart of a server that keeps its
// states in a directory: the answer the user gave while the server
// restarted runs the call, once, whichever server takes it; the key and
// the answers taken are 0600 files. A server that keeps them in memory
// says why it refuses an answer to the server before it.
func TestInputRequiredAcrossRestart(t *testing.T) {
	allow := mcpsdk.InputResponseMap{askInputKey: &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": choiceAllowOnce}}}
	call := func(t *testing.T, cs *mcpsdk.ClientSession, responses mcpsdk.InputResponseMap, state string) *mcpsdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "mcp__srv__write", Arguments: json.RawMessage(`{"text":"hi"}`),
			InputResponses: responses, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	opts := &mcpsdk.ClientOptions{
		ElicitationHandler: answer("accept", choiceAllowOnce, nil),
		MultiRoundTrip:     &mcpsdk.MultiRoundTripOptions{Disabled: true},
	}
	// askThenRestart asks on one server, closes it and opens the next.
	askThenRestart := func(t *testing.T, e *env) string {
		t.Helper()
		e.open(t)
		res := call(t, e.connectAt(t, opts, "2026-07-28"), nil, "")
		if !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("want an input_required result; got %+v", res)
		}
		e.s.Close()
		e.w.Close()
		e.open(t)
		return res.RequestState
	}

	t.Run("kept in a directory", func(t *testing.T) {
		e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
		e.stateDir = filepath.Join(t.TempDir(), "auth")
		state := askThenRestart(t, e)
		cs := e.connectAt(t, opts, "2026-07-28")
		if r := call(t, cs, allow, state); r.IsError || r.Meta["freecode/decision"] != "asked" || resultText(r) != "wrote hi" {
			t.Errorf("the answer to the server before the restart: isError %v, decision %v, text %q", r.IsError, r.Meta["freecode/decision"], resultText(r))
		}
		// One answer, one call: on this server, and on the next.
		const used = "this answer was used already"
		if r := call(t, cs, allow, state); !r.IsError || !strings.Contains(resultText(r), used) {
			t.Errorf("the answer again: %q, want %q", resultText(r), used)
		}
		e.s.Close()
		e.w.Close()
		e.open(t)
		if r := call(t, e.connectAt(t, opts, "2026-07-28"), allow, state); !r.IsError || !strings.Contains(resultText(r), used) {
			t.Errorf("the answer again after another restart: %q, want %q", resultText(r), used)
		}
		for _, name := range []string{askKeyFile, askUsedFile} {
			fi, err := os.Stat(filepath.Join(e.stateDir, name))
			if err != nil {
				t.Error(err)
			} else if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", name, fi.Mode().Perm())
			}
		}
	})
	t.Run("kept in memory", func(t *testing.T) {
		e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
		state := askThenRestart(t, e)
		r := call(t, e.connectAt(t, opts, "2026-07-28"), allow, state)
		const why = "or one a server that has since restarted asked: it keeps no question over a restart"
		if !r.IsError || !strings.Contains(resultText(r), why) {
			t.Errorf("the answer to the server before the restart: %q, want it refused saying %q", resultText(r), why)
		}
	})
}
