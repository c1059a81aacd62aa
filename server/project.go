package server

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/wire"
)

// errNoProject is the error of what needs a project, asked of a sidecar
// that has none.
var errNoProject = errors.New("the sidecar has no project: no workspace folder was given")

// project is freecode/project: the project, its trust and the files in
// use.
func (sess *session) project(ctx context.Context, _ jsonrpc2.RawMessage) (any, error) {
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	out := wire.Project(w.Project(), w.Problems())
	return &out, nil
}

// trust is freecode/project/trust: the user trusts the project (its allow
// rules apply) or no longer does. The change is recorded in the user's
// config and applies to the next decision.
func (sess *session) trust(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.TrustParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if !has(params, "trusted") {
		return nil, required("trusted")
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	if w.Project().Root == "" {
		return nil, errNoProject
	}
	sess.logger.Info("trust", "trusted", p.Trusted)
	if err := w.SetTrusted(ctx, p.Trusted); err != nil {
		return nil, err
	}
	return &protocol.TrustResult{ProjectTrusted: w.Project().Trusted}, nil
}
