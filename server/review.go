package server

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/server/wire"
	"github.com/freecode/freecode/workspace"
)

// toolsReview is freecode/tools/review: what of a server awaits review
// (diff), or the user's verdict on it (accept, reject).
func (sess *session) toolsReview(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	var p protocol.ReviewParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Server == "":
		return nil, required("server")
	case p.Action == "":
		return nil, required("action")
	}
	w, err := sess.srv.workspace()
	if err != nil {
		return nil, err
	}
	if !w.HasServer(p.Server) {
		return nil, fmt.Errorf("reviewing %q: %w", p.Server, mcp.ErrNoServer)
	}
	var reviews []workspace.ToolReview
	switch p.Action {
	case protocol.ReviewDiff:
		for _, r := range w.Reviews(p.Server) {
			if p.Tool == "" || r.Tool == p.Tool {
				reviews = append(reviews, r)
			}
		}
	case protocol.ReviewAccept, protocol.ReviewReject:
		op := w.AcceptDefinition
		if p.Action == protocol.ReviewReject {
			op = w.RejectDefinition
		}
		sess.logger.Info("tool definition review", "server", p.Server, "tool", p.Tool, "action", p.Action)
		reviews, err = op(ctx, p.Server, p.Tool, p.Hash)
		if err != nil {
			return nil, reviewError(err)
		}
	default:
		return nil, invalidParams("action", "want %q, %q or %q, got %q", protocol.ReviewDiff, protocol.ReviewAccept, protocol.ReviewReject, p.Action)
	}
	out := &protocol.ReviewResult{Reviews: make([]protocol.ToolReview, 0, len(reviews))}
	for _, r := range reviews {
		out.Reviews = append(out.Reviews, wire.ToolReview(r))
	}
	return out, nil
}

// reviewError maps a review's failure to the protocol's errors.
func reviewError(err error) error {
	switch {
	case errors.Is(err, manifest.ErrNoTool):
		return jsonrpc2.NewError(protocol.CodeNoSuchServer, err.Error())
	case errors.Is(err, manifest.ErrStale):
		return invalidParams("hash", "%v; ask for the diff again", err)
	case errors.Is(err, manifest.ErrNothingToReview):
		return invalidParams("tool", "%v", err)
	case errors.Is(err, workspace.ErrNoReview):
		return invalidParams("server", "%v", err)
	}
	return err
}

// sendReviews tells the frontend a server's tools that await review, and
// records whether it has any, for a resync to clear.
func (f *forwarder) sendReviews(server string, reviews []workspace.ToolReview) {
	rn := &protocol.ReviewNeeded{Server: server, Reviews: make([]protocol.ToolReview, 0, len(reviews))}
	for _, r := range reviews {
		rn.Reviews = append(rn.Reviews, wire.ToolReview(r))
	}
	f.reviews[server] = len(reviews) > 0
	f.sess.notify(protocol.NotifyReviewNeeded, rn)
}

// resyncReviews sends every server's reviews as they are now, and an
// empty list for each server the frontend was told had some and has none.
func (f *forwarder) resyncReviews() {
	byServer := map[string][]workspace.ToolReview{}
	for _, r := range f.w.Reviews("") {
		byServer[r.Server] = append(byServer[r.Server], r)
	}
	for server, rs := range byServer {
		f.sendReviews(server, rs)
	}
	for server, had := range f.reviews {
		if had && byServer[server] == nil {
			f.sendReviews(server, nil)
		}
	}
}
