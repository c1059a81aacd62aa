package orchestrator

import (
	"context"
	"fmt"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/permissions"
)

// Review marks a tool whose definition awaits the user's review: the
// workspace pins each server's tool definitions and registers a tool
// whose server lists another definition than the one accepted as it was
// accepted (see internal/manifest.Shown), with a Review.
//
// A changed or new tool asks before every call, even under an allow rule
// (a deny rule still denies), with the change shown (a new tool's whole
// definition), until the user accepts it; a rejected one is denied; a
// hidden one is in no provider definitions, no tool_search result and no
// list of FreeCode's MCP server. A new tool is always hidden: trust on
// first use covers a server's first sight only, and a tool it adds later
// reaches no model before the user accepted it.
type Review struct {
	// Kind is manifest.KindChanged or manifest.KindNew.
	Kind string
	// Rejected: the user rejected the definition the server lists.
	Rejected bool
	// Hidden: the tool is not offered to a model.
	Hidden bool
	// Hash is the listed definition's hash: what accepting in answer to a
	// prompt accepts, and nothing the server changed since.
	Hash string
	// Change is what differs from the accepted definition (the whole
	// definition for a new tool).
	Change *manifest.Change
}

// equal reports whether two reviews register alike.
func (r *Review) equal(o *Review) bool {
	if r == nil || o == nil {
		return r == o
	}
	return r.Kind == o.Kind && r.Rejected == o.Rejected && r.Hidden == o.Hidden && r.Hash == o.Hash
}

// RequestReview is the review a permission Request carries for a tool
// whose definition changed or is new: what the user is asked to look at.
type RequestReview struct {
	Kind string // "changed" or "new"
	// Hash is the definition shown; an Answer with AcceptDefinition
	// accepts this one only.
	Hash string
	// Diff is Change as lines to read (the server's text: escape it
	// before it reaches a terminal).
	Diff   string
	Change *manifest.Change
}

// ReviewedTool is one tool of a server as the workspace registers it: its
// definition as a model is to be shown it, and its review, if any.
type ReviewedTool struct {
	Tool   *mcpsdk.Tool
	Review *Review
}

// DefinitionReviewer is what the gate needs from whoever pins tool
// definitions (the workspace).
type DefinitionReviewer interface {
	// CurrentReview returns the tool's review as it stands now, nil if
	// there is none any more: another process (`freecode mcp review`)
	// may have accepted the change since the tool was registered. It is
	// a read, asked at every call of a tool under review: it changes no
	// registration.
	CurrentReview(ctx context.Context, t *Tool) *Review
	// AcceptDefinition accepts the definition of hash for the tool, as
	// the user did in answer to a permission prompt.
	AcceptDefinition(ctx context.Context, t *Tool, hash string) error
}

// Hidden reports whether the tool is kept from models: its definition
// changed in a way its accepted one cannot stand for, or was rejected.
func (t *Tool) Hidden() bool { return t.Review != nil && t.Review.Hidden }

// SetReviewedTools is SetServerTools for tools the workspace reviewed
// against their pins: each is registered as Tool says, with its Review.
func (r *Registry) SetReviewedTools(server string, tools []ReviewedTool, run Runner, reason string) {
	defs := make([]*mcpsdk.Tool, len(tools))
	reviews := make(map[string]*Review, len(tools))
	for i, rt := range tools {
		defs[i] = rt.Tool
		if rt.Review != nil && rt.Tool != nil {
			reviews[rt.Tool.Name] = rt.Review
		}
	}
	r.setServerTools(server, defs, run, reason, reviews)
}

// gateReview applies a tool's review before the rules are asked: a
// rejected definition is denied, a changed or new one asked about whatever
// the rules say (deny still wins). It reports whether it decided;
// otherwise the rules decide as for any tool.
func (o *Orchestrator) gateReview(ctx context.Context, p *prepared, eo *ExecOptions) (Decision, string, bool) {
	t := p.tool
	if t.Review == nil {
		return "", "", false
	}
	d := o.perms.Load().Decide(t.ID, t.alias, false)
	p.noteRule(d)
	if d.Effect == permissions.Deny {
		return DecisionDenied, fmt.Sprintf("%s was denied: %s", t.ID, d.Reason), true
	}
	rv := t.Review
	if o.opts.Reviewer != nil {
		if rv = o.opts.Reviewer.CurrentReview(ctx, t); rv == nil {
			return "", "", false // accepted meanwhile: the rules decide
		}
	}
	if rv.Rejected {
		return DecisionDenied, fmt.Sprintf("%s was not run: you rejected the definition its server now lists; `freecode mcp review %s` shows it", t.ID, t.Server), true
	}
	what := "its definition changed since you accepted it"
	if rv.Kind == manifest.KindNew {
		what = fmt.Sprintf("it is new: server %q listed it after you accepted its tools", t.Server)
	}
	if eo.Approver == nil {
		return DecisionDenied, fmt.Sprintf("%s was not run: %s, and there is no one to ask; review it with `freecode mcp review %s`", t.ID, what, t.Server), true
	}
	shown := "; the change is shown"
	if rv.Kind == manifest.KindNew {
		shown = "; its definition is shown"
	}
	dec, text := o.ask(ctx, p, eo, what+shown, rv)
	return dec, text, true
}

// requestReview is the Request's form of rv.
func requestReview(rv *Review) *RequestReview {
	if rv == nil || rv.Change == nil {
		return nil
	}
	return &RequestReview{Kind: rv.Kind, Hash: rv.Hash, Diff: rv.Change.Text(), Change: rv.Change}
}

// acceptAnswered accepts the definition the user accepted in answer to a
// prompt, and says what went wrong, if anything, for a warning.
func (o *Orchestrator) acceptAnswered(ctx context.Context, t *Tool, req *RequestReview) string {
	if o.opts.Reviewer == nil || req == nil {
		return ""
	}
	if err := o.opts.Reviewer.AcceptDefinition(ctx, t, req.Hash); err != nil {
		return fmt.Sprintf("the new definition of %s was not accepted: %v", t.ID, err)
	}
	return ""
}
