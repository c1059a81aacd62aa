package mcpserve

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/workspace"
)

// serveHTTP serves e's server on a loopback port with token ("" for none)
// and returns its URL; the test's cleanup stops it.
func (e *env) serveHTTP(t testing.TB, token string) string {
	t.Helper()
	ln, err := Listen(t.Context(), "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.s.Handler(HTTPOptions{Addr: ln.Addr(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		srv.Serve(ln)
		close(done)
	}()
	t.Cleanup(func() {
		// Sessions first: their open streams hold Shutdown.
		e.s.Close()
		srv.Shutdown(context.Background())
		<-done
	})
	return "http://" + ln.Addr().String() + Path
}

// bearerTransport adds the token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// Only requests naming this server, from no page or a loopback page, with
// the token, reach the MCP handler.
func TestHTTPGuard(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.open(t)
	const token = "the-token"
	url := e.serveHTTP(t, token)
	hostport := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	_, port, _ := net.SplitHostPort(hostport)

	tests := []struct {
		name    string
		host    string // "" keeps the URL's
		origin  string
		auth    string
		want    int
		wwwAuth string
	}{
		{"token", "", "", "Bearer " + token, http.StatusOK, ""},
		{"scheme in lower case", "", "", "bearer " + token, http.StatusOK, ""},
		{"localhost", "localhost:" + port, "", "Bearer " + token, http.StatusOK, ""},
		{"loopback origin", "", "http://localhost:6274", "Bearer " + token, http.StatusOK, ""},
		{"loopback origin by address", "", "http://127.0.0.1:3000", "Bearer " + token, http.StatusOK, ""},
		{"no token", "", "", "", http.StatusUnauthorized, `Bearer realm="freecode"`},
		{"wrong token", "", "", "Bearer not-the-token", http.StatusUnauthorized, `Bearer realm="freecode", error="invalid_token"`},
		{"token as a prefix", "", "", "Bearer " + token + "x", http.StatusUnauthorized, `Bearer realm="freecode", error="invalid_token"`},
		{"basic scheme", "", "", "Basic " + token, http.StatusUnauthorized, `Bearer realm="freecode"`},
		{"rebinding host", "evil.example:" + port, "", "Bearer " + token, http.StatusForbidden, ""},
		{"rebinding host, no port", "evil.example", "", "Bearer " + token, http.StatusForbidden, ""},
		{"other port", "127.0.0.1:1", "", "Bearer " + token, http.StatusForbidden, ""},
		{"other loopback address", "127.0.0.2:" + port, "", "Bearer " + token, http.StatusForbidden, ""},
		{"localhost lookalike", "localhost.evil.example:" + port, "", "Bearer " + token, http.StatusForbidden, ""},
		{"remote origin", "", "http://evil.example", "Bearer " + token, http.StatusForbidden, ""},
		{"null origin", "", "null", "Bearer " + token, http.StatusForbidden, ""},
		{"origin with loopback in its name", "", "http://127.0.0.1.evil.example", "Bearer " + token, http.StatusForbidden, ""},
		// The Host check comes before the token: a rebinding page learns
		// nothing about it.
		{"rebinding host, no token", "evil.example:" + port, "http://evil.example", "", http.StatusForbidden, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initializeBody))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want || resp.Header.Get("WWW-Authenticate") != tc.wwwAuth {
				t.Errorf("status %d, WWW-Authenticate %q; want %d, %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.want, tc.wwwAuth)
			}
		})
	}
}

// A client over Streamable HTTP lists and calls tools, answers a
// permission form and hears of new tools.
func TestHTTPClient(t *testing.T) {
	for _, version := range askRevisions {
		t.Run(version, func(t *testing.T) { testHTTPClient(t, version) })
	}
}

// testHTTPClient is TestHTTPClient with a client that offers version: a
// session of 2025-11-25, or requests of 2026-07-28, on the same endpoint.
func testHTTPClient(t *testing.T, version string) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	token := NewToken()
	url := e.serveHTTP(t, token)
	changed := make(chan struct{}, 16)
	c := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "http-client", Version: "1"}, &mcpsdk.ClientOptions{
		ElicitationHandler: answer("accept", choiceAllowOnce, nil),
		ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) {
			changed <- struct{}{}
		},
	})
	cs, err := c.Connect(t.Context(), &mcpsdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}},
		&mcpsdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Errorf("negotiated %s, want %s", got, version)
	}
	if names := listNames(t, cs); !slices.Contains(names, "mcp__srv__echo") {
		t.Fatalf("listed %v", names)
	}
	if r := callTool(t, cs, "mcp__srv__echo", `{"text":"over http"}`); r.IsError || resultText(r) != "over http" {
		t.Errorf("echo: %+v", r)
	}
	// Not read-only: the form goes to this client, on the call's stream
	// (2025-11-25) or in its result (2026-07-28).
	sub := e.w.Subscribe(&workspace.SubscribeOptions{Reviews: true})
	defer sub.Close()
	if r := callTool(t, cs, "mcp__srv__addtool", `{"text":"later"}`); r.IsError || r.Meta["freecode/decision"] != "asked" {
		t.Fatalf("addtool: %s (%v)", resultText(r), r.Meta)
	}
	// The new tool is listed once accepted.
	awaitReviews(t, sub, "srv", 1)
	if _, err := e.w.AcceptDefinition(t.Context(), "srv", "later", ""); err != nil {
		t.Fatal(err)
	}
	for {
		waitFor(t, changed, "tools/list_changed over HTTP")
		if slices.Contains(listNames(t, cs), "mcp__srv__later") {
			break
		}
	}

	// Without the token the same client gets nowhere.
	_, err = c.Connect(t.Context(), &mcpsdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Errorf("connecting without the token: %v", err)
	}
}

// Serving without a token is for loopback only.
func TestHandlerNoTokenLoopbackOnly(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.open(t)
	for _, addr := range []net.Addr{
		&net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 8765},
		&net.TCPAddr{IP: net.IPv4zero, Port: 8765},
	} {
		if _, err := e.s.Handler(HTTPOptions{Addr: addr}); err == nil {
			t.Errorf("%s without a token: no error", addr)
		}
		if _, err := e.s.Handler(HTTPOptions{Addr: addr, Token: "t"}); err != nil {
			t.Errorf("%s with a token: %v", addr, err)
		}
	}
}

func TestListen(t *testing.T) {
	tests := []struct {
		addr, wantHost string // wantHost "" means refused
		remote         bool
	}{
		{"127.0.0.1:0", "127.0.0.1", false},
		{"localhost:0", "127.0.0.1", false},
		{":0", "127.0.0.1", false},
		{"0.0.0.0:0", "", false},
		{"[::]:0", "", false},
		{"192.0.2.1:0", "", false},
		{"example.com:0", "", false},
		{"example.com:0", "", true}, // a name could resolve to anything
		{"127.0.0.1", "", false},    // no port
	}
	for _, tc := range tests {
		ln, err := Listen(t.Context(), tc.addr, &ListenOptions{AllowRemote: tc.remote})
		if tc.wantHost == "" {
			if err == nil {
				ln.Close()
				t.Errorf("Listen(%q, remote %v): no error", tc.addr, tc.remote)
			}
			continue
		}
		if err != nil {
			t.Errorf("Listen(%q): %v", tc.addr, err)
			continue
		}
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); host != tc.wantHost {
			t.Errorf("Listen(%q) bound %s, want %s", tc.addr, ln.Addr(), tc.wantHost)
		}
		ln.Close()
	}
}

// A kept token is reused only from a file no one else could have read or
// written.
func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	good := NewToken()
	write := func(name, token string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := WriteServeFile(path, ServeFile{URL: "http://127.0.0.1:1/mcp", Token: token, PID: 1}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		path string
		want string
	}{
		{"kept", write("ok.json", good, 0o600), good},
		{"missing", filepath.Join(dir, "none.json"), ""},
		{"short token", write("short.json", "abc", 0o600), ""},
		{"empty token", write("empty.json", "", 0o600), ""},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct {
			name string
			path string
			want string
		}{"readable by others", write("open.json", good, 0o644), ""})
		link := filepath.Join(dir, "link.json")
		if err := os.Symlink(filepath.Join(dir, "ok.json"), link); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct {
			name string
			path string
			want string
		}{"symlink", link, ""})
	}
	for _, tc := range tests {
		got, ok := LoadToken(tc.path)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: LoadToken = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "ok.json"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("serve file mode %v, want 0600", fi.Mode().Perm())
	}
	if a, b := NewToken(), NewToken(); a == b || len(a) != 43 {
		t.Errorf("NewToken: %q, %q", a, b)
	}
}

// The serve file is the user's, in ~/.freecode/auth whatever the config
// file, and its directory is made private even if it was not.
func TestServeFileIsTheUsers(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("FREECODE_CONFIG", filepath.Join(t.TempDir(), "repo", "config.json"))
	path, err := ServeFilePath()
	if want := filepath.Join(home, ".freecode", "auth", ServeFileName); err != nil || path != want {
		t.Fatalf("ServeFilePath() = %q, %v; want %q", path, err, want)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteServeFile(path, ServeFile{URL: "http://127.0.0.1:1/mcp", Token: NewToken(), PID: 1}); err != nil {
		t.Fatal(err)
	}
	got := map[string]os.FileMode{}
	for _, p := range []string{filepath.Dir(path), path} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(p)] = fi.Mode().Perm()
	}
	if diff := cmp.Diff(map[string]os.FileMode{"auth": 0o700, ServeFileName: 0o600}, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
}

func TestObjectSchema(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{`{"type":"object","properties":{}}`, `{"type":"object","properties":{}}`, false},
		{`{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"type":"object"}`, false},
		{`{"type":"array"}`, "", true},
		{`{"type":["object","null"]}`, "", true},
		{`[]`, "", true},
	}
	for _, tc := range tests {
		got, err := objectSchema([]byte(tc.in))
		if tc.err != (err != nil) {
			t.Errorf("objectSchema(%s): error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if diff := cmp.Diff(tc.want, string(got)); !tc.err && diff != "" {
			t.Errorf("objectSchema(%s) (-want +got):\n%s", tc.in, diff)
		}
	}
}
