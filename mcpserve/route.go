package mcpserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// statelessSince is the first revision served without sessions.
const statelessSince = "2026-07-28"

// revisionRouter serves the Streamable HTTP endpoint to clients of every
// revision at once. The go-sdk serves 2026-07-28 only from a stateless
// handler, and the older revisions' sessions (the standalone stream, an
// elicitation sent while a call runs) only from a stateful one, so each
// request goes to the handler of its revision:
//
//   - a request of a session (Mcp-Session-Id), and any GET or DELETE,
//     belongs to a session: the stateful handler;
//   - a POST whose Mcp-Protocol-Version is 2026-07-28 or later is one
//     request of that revision: the stateless handler, which also refuses
//     what the revision removed (initialize among them);
//   - any other POST starts a session if it is an initialize (or a batch,
//     which only 2025-03-26 sends); anything else without a session
//     (server/discover, or a request whose _meta names a revision its
//     header does not) is served statelessly, where the go-sdk checks its
//     headers and _meta and answers as the revision says.
type revisionRouter struct {
	stateful, stateless http.Handler
}

func (rr *revisionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		rr.stateful.ServeHTTP(w, r)
		return
	}
	if r.Header.Get("Mcp-Protocol-Version") >= statelessSince {
		rr.stateless.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcpsdk.DefaultMaxRequestBodyBytes))
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if startsSession(body) {
		rr.stateful.ServeHTTP(w, r)
		return
	}
	rr.stateless.ServeHTTP(w, r)
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
