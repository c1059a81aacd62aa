package mcpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StatelessSince is the first revision served without sessions: a
// 2026-07-28 client never sends initialize, and each of its requests names
// its revision (the Mcp-Protocol-Version header over HTTP, its
// _meta["io.modelcontextprotocol/protocolVersion"] everywhere).
const StatelessSince = "2026-07-28"

// A RevisionRouter serves the Streamable HTTP endpoint to clients of every
// revision at once. The go-sdk serves 2026-07-28 only from a stateless
// handler, and the older revisions' sessions (the standalone stream, an
// elicitation sent while a call runs) only from a stateful one, so each
// request goes to the handler of its revision:
//
//   - a request of a session (Mcp-Session-Id), and any GET or DELETE,
//     belongs to a session: Stateful;
//   - a POST whose Mcp-Protocol-Version is StatelessSince or later is one
//     request of that revision: Stateless, which also refuses what the
//     revision removed (initialize among them);
//   - any other POST starts a session if it is an initialize (or a batch,
//     which only 2025-03-26 sends); anything else without a session
//     (server/discover, or a request whose _meta names a revision its
//     header does not) is served statelessly, where the go-sdk checks its
//     headers and _meta and answers as the revision says.
type RevisionRouter struct {
	Stateful, Stateless http.Handler
}

func (rr *RevisionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		rr.Stateful.ServeHTTP(w, r)
		return
	}
	if r.Header.Get("Mcp-Protocol-Version") >= StatelessSince {
		rr.Stateless.ServeHTTP(w, r)
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if startsSession(body) {
		rr.Stateful.ServeHTTP(w, r)
		return
	}
	rr.Stateless.ServeHTTP(w, r)
}

// startsSession reports whether a sessionless POST body is what begins a
// session of the older revisions: an initialize call, or a batch. A body
// that is not JSON goes to the stateful handler too, which refuses it as
// it always has.
func startsSession(body []byte) bool {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		return true
	}
	var msg struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return true
	}
	return msg.Method == "initialize"
}

// RoutingHeaders checks, before next serves it, that a Streamable HTTP
// request of a task method carries its task id in the Mcp-Name header, as
// SEP-2663 has clients send it for the load balancers that route by it
// (the go-sdk checks the header for its own methods only). A request
// without it, or with another id, is refused with HTTP 400 and -32020;
// requests of revisions older than StatelessSince, which have no such
// header, pass.
func RoutingHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Protocol-Version") < StatelessSince {
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
		if json.Unmarshal(body, &msg) == nil && (msg.Method == MethodGetTask || msg.Method == MethodUpdateTask || msg.Method == MethodCancelTask) {
			name := strings.TrimSpace(r.Header.Get("Mcp-Name"))
			if name != msg.Params.TaskID {
				id := msg.ID
				if len(id) == 0 {
					id = json.RawMessage("null")
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
					"code":    CodeHeaderMismatch,
					"message": fmt.Sprintf("the Mcp-Name header (%q) must be the task id of the %s request (%q)", name, msg.Method, msg.Params.TaskID),
				}})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
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
