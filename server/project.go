package server

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/permissions"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/workspace"
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
// rules apply) with its rules as they are now, or as they were shown
// (rulesHash), or no longer does. The change is recorded in the user's
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
	sess.logger.Info("trust", "trusted", p.Trusted, "rulesHash", p.RulesHash)
	if p.Trusted {
		err = w.AcceptRules(ctx, p.RulesHash)
	} else {
		err = w.SetTrusted(ctx, false)
	}
	if errors.Is(err, workspace.ErrRulesChanged) {
		return nil, invalidParams("rulesHash", "%v", err)
	}
	if err != nil {
		return nil, err
	}
	return &protocol.TrustResult{ProjectTrusted: w.Project().Trusted}, nil
}

// sendRulesReview tells the frontend what of the project's rules awaits
// the user's review, when that changed since it was last told: an empty
// list once nothing does.
func (f *forwarder) sendRulesReview(p *permissions.Pending) {
	hash := ""
	if p != nil {
		hash = p.Hash
	}
	if hash == f.rulesHash {
		return
	}
	f.rulesHash = hash
	r := wire.RulesReview(p)
	f.sess.notify(protocol.NotifyRulesReview, &r)
}
