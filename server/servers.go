package server

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/workspace"
)

// servers is freecode/servers: every server's status.
func (sess *session) servers(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	sts := w.Statuses()
	out := &protocol.ServersResult{Servers: make([]protocol.ServerStatus, 0, len(sts))}
	for _, st := range sts {
		out.Servers = append(out.Servers, wire.ServerStatus(st))
	}
	return out, nil
}

// serverName decodes the params of start, stop and restart.
func serverName(params jsonrpc2.RawMessage) (string, error) {
	var p protocol.ServerParams
	if err := decode(params, &p); err != nil {
		return "", err
	}
	if p.Name == "" {
		return "", required("name")
	}
	return p.Name, nil
}

// lifecycleOp is one of the workspace's start, stop and restart.
type lifecycleOp func(w *workspace.Workspace, ctx context.Context, name string) (mcp.Status, error)

// serverOp runs op on the named server and answers with its status: a
// server that failed to start is a status that says so, not an error.
func (sess *session) serverOp(ctx context.Context, params jsonrpc2.RawMessage, verb string, op lifecycleOp) (any, error) {
	name, err := serverName(params)
	if err != nil {
		return nil, err
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	sess.logger.Info(verb, "server", name)
	st, err := op(w, ctx, name)
	var werr *jsonrpc2.Error
	if errors.As(err, &werr) {
		return nil, err // the op's own refusal
	}
	if err != nil && (errors.Is(err, mcp.ErrNoServer) || errors.Is(err, workspace.ErrAwaitingApproval) || ctx.Err() != nil) {
		return nil, fmt.Errorf("%s %q: %w", verb, name, err)
	}
	if err != nil {
		sess.logger.Info(verb+" failed", "server", name, "error", err)
	}
	out := wire.ServerStatus(st)
	return &out, nil
}

// startServer is freecode/servers/start: it answers once the server is
// connected or failed, within its timeout.
func (sess *session) startServer(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return sess.serverOp(ctx, params, "starting", (*workspace.Workspace).StartServer)
}

// stopServer is freecode/servers/stop.
func (sess *session) stopServer(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return sess.serverOp(ctx, params, "stopping", (*workspace.Workspace).StopServer)
}

// restartServer is freecode/servers/restart.
func (sess *session) restartServer(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return sess.serverOp(ctx, params, "restarting", (*workspace.Workspace).RestartServer)
}

// approveServer is freecode/servers/approve: the user approves a project
// server's entry, the one whose hash they were shown (it starts), or
// revokes the approval (it stops).
func (sess *session) approveServer(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.ApproveParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Name == "":
		return nil, required("name")
	case !has(params, "approve"):
		return nil, required("approve")
	case p.Approve && p.EntryHash == "":
		return nil, invalidParams("entryHash", "required to approve: the approval.entryHash of the status the user was shown")
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	if w.Project().Root == "" {
		return nil, errNoProject
	}
	sess.logger.Info("approving", "server", p.Name, "approve", p.Approve)
	st, err := w.Approve(ctx, p.Name, p.Approve, p.EntryHash)
	var unsettled *workspace.NotSettledError
	switch {
	case err == nil, errors.As(err, &unsettled):
		out := wire.ServerStatus(st)
		return &out, nil
	case errors.Is(err, workspace.ErrEntryChanged):
		return nil, invalidParams("entryHash", "%v", err)
	case errors.Is(err, mcp.ErrNoServer) || ctx.Err() != nil:
		return nil, err
	}
	return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
}
