package server

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/server/wire"
)

// approver asks, for the orchestrator, the frontend whose
// freecode/tools/execute a call belongs to: given with the batch, it is
// the only frontend asked for permission for the call. A server's
// requests that a call causes (elicitation, sampling) reach the same
// frontend and no other, through the session's Asker (relay.go).
type approver struct {
	sess *session
}

var _ orchestrator.Approver = (*approver)(nil)

// Approve asks the frontend with freecode/permission/request. No answer
// before ctx's deadline (the call's own timeout), an error, a frontend
// that does not implement the request or goes away: each is an error,
// which the orchestrator counts as a denial. When ctx ends first, the
// frontend is sent $/cancelRequest, so that it can take its prompt down.
func (c *approver) Approve(ctx context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	pr := wire.PermissionRequest(req)
	var resp protocol.PermissionResponse
	if err := lsp.Call(ctx, c.sess.conn, protocol.MethodPermissionRequest, &pr, &resp); err != nil {
		if errors.Is(err, jsonrpc2.ErrMethodNotFound) {
			return orchestrator.Answer{}, errors.New("the frontend does not answer permission requests")
		}
		return orchestrator.Answer{}, fmt.Errorf("asking the frontend: %w", err)
	}
	switch resp.Decision {
	case protocol.AllowOnce, protocol.AllowAlways, protocol.Deny:
	default:
		return orchestrator.Answer{}, fmt.Errorf("the frontend answered decision %q", resp.Decision)
	}
	switch resp.Scope {
	case "", protocol.ScopeLocal, protocol.ScopeUser:
	default:
		return orchestrator.Answer{}, fmt.Errorf("the frontend answered scope %q", resp.Scope)
	}
	c.sess.logger.Info("permission answered", "tool", req.Tool, "callId", req.CallID, "decision", resp.Decision, "scope", resp.Scope,
		"acceptDefinition", resp.AcceptDefinition)
	a := wire.Answer(resp)
	// Only a definition shown can be accepted.
	a.AcceptDefinition = a.AcceptDefinition && req.Review != nil
	return a, nil
}
