package mcptasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// HTTPHandler serves server over Streamable HTTP to clients of every
// revision, with the task methods' Mcp-Name checked (RoutingHeaders): a
// POST that starts a session (initialize), and the requests of a session,
// go to a stateful handler; every other POST to a stateless one, as the
// go-sdk serves 2026-07-28 only without sessions.
func HTTPHandler(server *mcpsdk.Server) http.Handler {
	get := func(*http.Request) *mcpsdk.Server { return server }
	return RoutingHeaders(&revisionSplit{
		stateful:  mcpsdk.NewStreamableHTTPHandler(get, nil),
		stateless: mcpsdk.NewStreamableHTTPHandler(get, &mcpsdk.StreamableHTTPOptions{Stateless: true}),
	})
}

// RoutingHeaders checks, before next serves it, that a Streamable HTTP
// request of a task method carries its task id in the Mcp-Name header, as
// SEP-2663 has clients send it for the load balancers that route by it
// (the go-sdk checks the header for its own methods only). A request
// without it, or with another id, is refused with HTTP 400 and -32020;
// requests of older revisions than 2026-07-28, which have no such header,
// pass.
func RoutingHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Protocol-Version") < "2026-07-28" {
			next.ServeHTTP(w, r)
			return
		}
		body, ok := readBody(w, r)
		if !ok {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && (msg.Method == mcpwire.MethodGetTask || msg.Method == mcpwire.MethodUpdateTask || msg.Method == mcpwire.MethodCancelTask) {
			name := strings.TrimSpace(r.Header.Get("Mcp-Name"))
			if name != msg.Params.TaskID {
				id := msg.ID
				if len(id) == 0 {
					id = json.RawMessage("null")
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
					"code":    mcpwire.CodeHeaderMismatch,
					"message": fmt.Sprintf("the Mcp-Name header (%q) must be the task id of the %s request (%q)", name, msg.Method, msg.Params.TaskID),
				}})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// revisionSplit sends a session's requests, and a POST that starts one
// (initialize), to the stateful handler, and every other POST (2026-07-28
// has no session) to the stateless one.
type revisionSplit struct {
	stateful, stateless http.Handler
}

func (rs *revisionSplit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		rs.stateful.ServeHTTP(w, r)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method == "initialize" {
		rs.stateful.ServeHTTP(w, r)
		return
	}
	rs.stateless.ServeHTTP(w, r)
}

// readBody reads r's body, at most the go-sdk's limit, and puts it back
// for the handler after; on failure it has answered w.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcpsdk.DefaultMaxRequestBodyBytes))
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}
