package server

import (
	"bytes"
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/secretstore"
)

// secretsSet is freecode/secrets/set: a secret the user typed for a server
// that failed without it. The value is neither logged nor echoed.
func (sess *session) secretsSet(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.SecretSetParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Name == "":
		return nil, required("name")
	case p.Value == "":
		return nil, required("value")
	}
	if err := secretstore.ValidName(p.Name); err != nil {
		return nil, invalidParams("name", "%v", err)
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	sess.logger.Info("secrets/set", "name", p.Name)
	where, started, err := w.SetSecret(ctx, p.Name, p.Value)
	if err != nil {
		return nil, err
	}
	if started == nil {
		started = []string{}
	}
	return &protocol.SecretSetResult{Where: where, Started: started}, nil
}

// secretParams are the requests whose params hold what the user typed
// as a secret, and how each is masked in place: freecode/secrets/set's
// value, and every value of freecode/registry/install (the trace cannot
// tell a secret one from another without the server.json).
var secretParams = map[string]func(params map[string]json.RawMessage) bool{
	protocol.MethodSecretsSet: func(p map[string]json.RawMessage) bool {
		if _, ok := p["value"]; !ok {
			return false
		}
		p["value"] = json.RawMessage(`"***"`)
		return true
	},
	protocol.MethodRegistryInstall: func(p map[string]json.RawMessage) bool {
		raw, ok := p["values"]
		if !ok {
			return false
		}
		var values map[string]json.RawMessage
		if json.Unmarshal(raw, &values) != nil {
			p["values"] = json.RawMessage(`"***"`)
			return true
		}
		for k := range values {
			values[k] = json.RawMessage(`"***"`)
		}
		p["values"], _ = json.Marshal(values)
		return true
	},
}

// maskSecrets returns the traced message body with the secrets of a
// request of secretParams as "***": --trace writes every message to the
// sidecar's stderr, which an editor shows in its log.
func maskSecrets(body []byte) []byte {
	method := ""
	for m := range secretParams {
		if bytes.Contains(body, []byte(m)) {
			method = m
			break
		}
	}
	// A method's name may also be written with escapes ("freecode\/secrets\/set"
	// is the same string to a JSON decoder): a body with a backslash is
	// read whole.
	if method == "" && !bytes.Contains(body, []byte(`\`)) {
		return body
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		if method == "" {
			return body // not JSON, and no request of ours
		}
		return []byte(`{"method":"` + method + `","params":"*** (not JSON)"}`)
	}
	var m string
	if json.Unmarshal(msg["method"], &m) != nil || secretParams[m] == nil {
		// A response, or another request that names the method in its
		// text: nothing of it is a secret typed.
		return body
	}
	var params map[string]json.RawMessage
	switch {
	case json.Unmarshal(msg["params"], &params) != nil:
		// Not an object: the request is refused, but its trace would
		// show what was sent.
		msg["params"] = json.RawMessage(`"***"`)
	case !secretParams[m](params):
		return body
	default:
		msg["params"], _ = json.Marshal(params)
	}
	if masked, err := json.Marshal(msg); err == nil {
		return masked
	}
	return []byte(`{"method":"` + m + `","params":"***"}`)
}
