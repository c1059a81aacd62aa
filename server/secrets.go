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
// as a secret, and what the trace shows of their params: decoded as the
// handler decodes them (encoding/json, which takes a key in any case), and
// written again with the secrets as *** and nothing else of what was
// sent. freecode/secrets/set's value; every value of
// freecode/registry/install (the trace cannot tell a secret one from
// another without the server.json). Params that do not decode are "***".
var secretParams = map[string]func(raw json.RawMessage) any{
	protocol.MethodSecretsSet: func(raw json.RawMessage) any {
		var p protocol.SecretSetParams
		if decode(jsonrpc2.RawMessage(raw), &p) != nil {
			return "***"
		}
		if p.Value != "" {
			p.Value = "***"
		}
		return p
	},
	protocol.MethodRegistryInstall: func(raw json.RawMessage) any {
		var p protocol.RegistryInstallParams
		if decode(jsonrpc2.RawMessage(raw), &p) != nil {
			return "***"
		}
		for k := range p.Values {
			p.Values[k] = "***"
		}
		return p
	},
}

// maskSecrets returns the traced message body with the secrets of a
// request of secretParams as "***": --trace writes every message to the
// sidecar's stderr, which an editor shows in its log. Such a request is
// written again of its jsonrpc, id, method and params only. A member
// named "method" that names one of them makes it one, whichever of
// several the sidecar's JSON-RPC takes (it reads keys as written, a map
// as unescaped).
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
	members, ok := topMembers(body)
	if !ok {
		if method == "" {
			return body // not JSON, and no request of ours
		}
		return []byte(`{"method":"` + method + `","params":"*** (not JSON)"}`)
	}
	out := map[string]any{}
	var mask func(json.RawMessage) any
	var params json.RawMessage
	plainParams := false
	for _, kv := range members {
		switch kv.key {
		case "method":
			var m string
			if json.Unmarshal(kv.value, &m) == nil && secretParams[m] != nil && mask == nil {
				mask, out["method"] = secretParams[m], kv.value
			}
		case "params":
			// The JSON-RPC's: the last written as "params".
			if kv.plain || !plainParams {
				params, plainParams = kv.value, kv.plain
			}
		case "jsonrpc", "id":
			out[kv.key] = kv.value
		}
	}
	if mask == nil {
		// A response, or another request that names the method in its
		// text: nothing of it is a secret typed.
		return body
	}
	out["params"] = mask(params)
	if masked, err := json.Marshal(out); err == nil {
		return masked
	}
	return []byte(`{"method":"` + method + `","params":"***"}`)
}

// member is a member of a JSON object: its key unescaped, whether the key
// was written without escapes, its value as written.
type member struct {
	key   string
	plain bool
	value json.RawMessage
}

// topMembers returns the members of the JSON object body, every one of a
// key written several times, in order; false if body is not one.
func topMembers(body []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		from := dec.InputOffset()
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		raw := bytes.TrimLeft(body[from:dec.InputOffset()], " \t\r\n,")
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		out = append(out, member{k, string(raw) == `"`+k+`"`, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	return out, true
}
