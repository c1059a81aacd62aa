package server

import (
	"context"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/wire"
)

// permissions is freecode/permissions: the rules in force, in the order
// they are listed (user, project, local, session).
func (sess *session) permissions(ctx context.Context, _ jsonrpc2.RawMessage) (any, error) {
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	rules := w.Rules()
	out := &protocol.PermissionsResult{Rules: make([]protocol.Rule, 0, len(rules))}
	for _, r := range rules {
		out.Rules = append(out.Rules, wire.Rule(r))
	}
	return out, nil
}
