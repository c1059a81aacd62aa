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

// maskSecretValue returns the traced message body with the value of a
// freecode/secrets/set request as "***": --trace writes every message to
// the sidecar's stderr, which an editor shows in its log.
func maskSecretValue(body []byte) []byte {
	if !bytes.Contains(body, []byte(protocol.MethodSecretsSet)) {
		return body
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return []byte(`{"method":"` + protocol.MethodSecretsSet + `","params":"*** (not JSON)"}`)
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil {
		return body
	}
	if _, ok := params["value"]; ok {
		params["value"] = json.RawMessage(`"***"`)
		msg["params"], _ = json.Marshal(params)
		if masked, err := json.Marshal(msg); err == nil {
			return masked
		}
		return []byte(`{"method":"` + protocol.MethodSecretsSet + `","params":"***"}`)
	}
	return body
}
