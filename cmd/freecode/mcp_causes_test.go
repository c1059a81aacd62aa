package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server that does not come up is told cause first, in the user's
// words, then the detail: a port where nothing listens, a web server that
// is not an MCP endpoint, a program that is not an MCP server at all.
// Before, each was a chain of what FreeCode was doing ("connecting to …
// calling "initialize": sending "initialize": rejected by transport: Post
// …: dial tcp …: connect: connection refused"), "Not Implemented", and
// "exited with code 0".
func TestStartSaysTheCauseFirst(t *testing.T) {
	// A port nobody listens on: one just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	// A plain web server: pages on GET, 501 to a POST, as python's
	// http.server answers.
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "Not Implemented", http.StatusNotImplemented)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>hello</html>"))
	}))
	defer web.Close()
	path := filepath.Join(t.TempDir(), "config.json")
	data, err := json.Marshal(map[string]any{"mcp": map[string]any{"servers": []map[string]any{
		{"name": "refused", "url": "http://" + closed + "/mcp"},
		{"name": "web", "url": web.URL + "/"},
		{"name": "ls", "command": []string{"ls", "/"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, first string }{
		{"refused", `Server "refused" failed: nothing is listening at ` + closed + " (connection refused)"},
		{"web", `Server "web" failed: ` + web.URL + "/ answered the MCP handshake with 501 Not Implemented: a web server is there, but not an MCP endpoint at this URL"},
		{"ls", `Server "ls" failed: exited with code 0 before the MCP handshake, saying nothing on stderr: it does not look like an MCP server`},
	} {
		out, errOut, code := run(t, "--config", path, "mcp", "start", tc.name)
		if code == 0 || !strings.Contains(out+errOut, tc.first) {
			t.Errorf("mcp start %s: exit %d, want it to say %q first:\n%s%s", tc.name, code, tc.first, out, errOut)
		}
	}
}
