package server

import (
	"context"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/orchestrator"
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

// removeAllow is freecode/permissions/removeAllow: an "always allow" answer
// taken back. The rule leaves the session and the file of the answer's
// scope; the rules in force after it are what freecode/permissions lists,
// and the frontends hear of it by freecode/tools/changed.
func (sess *session) removeAllow(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.RemoveAllowParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Rule == "":
		return nil, required("rule")
	case p.Scope != protocol.ScopeLocal && p.Scope != protocol.ScopeUser:
		return nil, invalidParams("scope", "want %q or %q, got %q", protocol.ScopeLocal, protocol.ScopeUser, p.Scope)
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	path, removed, err := w.RemoveAllow(ctx, orchestrator.Scope(p.Scope), p.Rule)
	if err != nil {
		return nil, err
	}
	sess.logger.Info("always-allow taken back", "rule", p.Rule, "scope", p.Scope, "path", path, "removed", removed)
	return &protocol.RemoveAllowResult{Path: path, Removed: removed}, nil
}
