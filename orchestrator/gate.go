package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/freecode/freecode/internal/canonjson"
	"github.com/freecode/freecode/permissions"
)

// Approver asks the user whether a call may run; the sidecar asks the
// frontend that sent the batch, the CLI asks on its TTY.
type Approver interface {
	Approve(ctx context.Context, req Request) (Answer, error)
}

// ErrAskedLater is what an Approver returns (wrapped or not) when the
// question goes to the user by another round instead of being answered
// now: MCP 2026-07-28's input_required result, after which the client
// calls again with the answer. The call is not run this round, and its
// result says it waits for that answer; it is no failure to ask.
var ErrAskedLater = errors.New("the user is asked in another round")

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// Request is one permission question: what an Approver shows the user (the
// sidecar asks its frontend with freecode/permission/request).
type Request struct {
	CallID    string
	Tool      string // the id, never the alias
	Server    string
	Arguments json.RawMessage
	ReadOnly  bool
	// Destructive is the tool's destructiveHint, MCP's default (true)
	// when its server stated none; false for a read-only tool.
	Destructive bool
	// Annotated says the tool's server stated its readOnlyHint or its
	// destructiveHint (a built-in's are FreeCode's own): ReadOnly and
	// Destructive are then what the tool says of itself, not defaults.
	Annotated bool
	Reason    string
	// Review is set for a tool whose definition changed since the user
	// accepted it, or that is new: the change to look at before
	// answering, which an Answer may accept (AcceptDefinition).
	Review *RequestReview
	// App is set when the server's MCP Apps view made the call, not a
	// model: the server whose view it is (ToolCall.App).
	App string
	// ProjectTrusted says whether the project is trusted, so that an
	// "always allow" rule written to its local file would apply: the
	// trust of the rules in force when the question is asked
	// (permissions.Set.ProjectTrusted). An Approver offers that scope
	// only then.
	ProjectTrusted bool
	// NoAlwaysAllow, when not "", says why an AllowAlways answer could
	// take no effect, so that an Approver offers only AllowOnce and
	// Deny: the organization allows only its own allow rules
	// (allowManagedPermissionRulesOnly), or one of its rules asks about
	// the tool whatever any other rule allows. An AllowAlways answer then
	// counts as AllowOnce, with a warning: it is neither kept for the
	// session nor saved to a rule file, where it could never apply.
	NoAlwaysAllow string
}

// AnswerDecision is what the user answered.
type AnswerDecision string

// The answers to a permission request.
const (
	AllowOnce   AnswerDecision = "allowOnce"
	AllowAlways AnswerDecision = "allowAlways"
	Deny        AnswerDecision = "deny"
)

// Scope is the rule file an "always allow" answer is written to.
type Scope string

// The scopes an "always allow" answer may pick.
const (
	ScopeLocal Scope = "local" // <project>/.freecode/settings.local.json
	ScopeUser  Scope = "user"  // ~/.freecode/settings.json
)

// Answer is the user's answer to a Request.
type Answer struct {
	Decision AnswerDecision
	Scope    Scope
	// AcceptDefinition, with an allow decision on a Request that carries
	// a Review, accepts the definition shown: it becomes the tool's pin,
	// and the tool is asked about by the rules alone from then on.
	AcceptDefinition bool
}

// gate applies the permission rules to one call. It returns the decision
// and, for a denial, the text of the error result.
func (o *Orchestrator) gate(ctx context.Context, p *prepared, eo *ExecOptions) (Decision, string) {
	t := p.tool
	if dec, text, ok := o.gateReview(ctx, p, eo); ok {
		return dec, text
	}
	// A nil set means no rules: read-only tools are allowed, others ask.
	d := o.perms.Load().Decide(t.ID, t.alias, t.ReadOnly)
	p.noteRule(d)
	switch d.Effect {
	case permissions.Allow:
		return DecisionAllowed, ""
	case permissions.Deny:
		return DecisionDenied, fmt.Sprintf("%s was denied: %s", t.ID, d.Reason)
	}
	if eo.Approver == nil {
		return DecisionDenied, o.noApproverText(t, d)
	}
	// One question per tool at a time: a call that waited behind another's
	// question decides again, since its answer ("always allow") may cover
	// this call too (asking.go).
	done, err := o.asking.take(ctx, frontendOf(eo), t.ID)
	if err != nil {
		return DecisionDenied, fmt.Sprintf("%s was not run: it was cancelled while another call of it waited for the permission answer (%v)", t.ID, err)
	}
	defer done()
	d = o.perms.Load().Decide(t.ID, t.alias, t.ReadOnly)
	p.noteRule(d)
	switch d.Effect {
	case permissions.Allow:
		return DecisionAllowed, ""
	case permissions.Deny:
		return DecisionDenied, fmt.Sprintf("%s was denied: %s", t.ID, d.Reason)
	}
	return o.ask(ctx, p, eo, d.Reason, t.Review)
}

// Denied reports whether the rules deny t whatever is answered: a deny
// rule covers it.
func (o *Orchestrator) Denied(t *Tool) bool {
	return o.perms.Load().Decide(t.ID, t.alias, t.ReadOnly).Effect == permissions.Deny
}

// ask asks the batch's approver whether the call may run, for reason,
// showing rv's change if there is one.
func (o *Orchestrator) ask(ctx context.Context, p *prepared, eo *ExecOptions, reason string, rv *Review) (Decision, string) {
	t := p.tool
	// The user is shown the arguments the server will get, re-encoded from
	// what was validated, not the model's raw text: in raw JSON a repeated
	// key ({"path":"notes.txt", …, "path":"/home/me/.ssh/id_ed25519"})
	// shows one value first while the last is the one that counts. The
	// canonical form writes characters as they are (a "<" is not \u003c).
	args, err := canonjson.AppendValue(nil, p.args)
	if err != nil {
		return DecisionDenied, fmt.Sprintf("%s was not run: its arguments could not be shown for approval: %v", t.ID, err)
	}
	// An approver that does not answer within the call's own timeout
	// counts as a denial (docs/protocol.md), so a forgotten prompt cannot hold
	// the batch forever.
	actx, cancel := context.WithTimeout(ctx, o.timeoutOf(t))
	defer cancel()
	set := o.perms.Load()
	asked := time.Now()
	ans, err := safeApprove(actx, eo.Approver, Request{
		CallID:      p.call.CallID,
		Tool:        t.ID,
		Server:      t.Server,
		Arguments:   args,
		ReadOnly:    t.ReadOnly,
		Destructive: t.Destructive,
		Annotated:   t.hinted || t.Builtin,
		Reason:      reason,
		Review:      requestReview(rv),
		App:         p.call.App,
		// The rules it was decided by know it: whoever asks the user
		// need not ask the workspace again.
		ProjectTrusted: set.ProjectTrusted(),
		NoAlwaysAllow:  noAlwaysAllow(set, t),
	})
	if !errors.Is(err, ErrAskedLater) {
		p.tr.recordWait(p.gateSpan, asked, ans.Decision, err)
	}
	if errors.Is(err, ErrAskedLater) {
		// A first round: the call is made again with the answer.
		p.askedLater = true
		return DecisionDenied, fmt.Sprintf("%s was not run yet: it waits for the permission answer; %v", t.ID, err)
	}
	if err != nil {
		return DecisionDenied, fmt.Sprintf("%s was not run: asking for permission failed (%v), which counts as a denial", t.ID, err)
	}
	if err := actx.Err(); err != nil {
		// An answer that comes after the deadline, or after the batch was
		// cancelled, is no answer: an approver that ignores its ctx must not
		// turn a denial into an allow.
		return DecisionDenied, fmt.Sprintf("%s was not run: the permission answer came too late (%v), which counts as a denial", t.ID, context.Cause(actx))
	}
	warn := func(warning string) {
		if warning == "" {
			return
		}
		o.log.Warn(warning, "tool", t.ID, "callId", p.call.CallID)
		if eo.OnWarning != nil {
			eo.OnWarning(p.call.CallID, warning)
		}
	}
	p.answer = ans.Decision
	switch ans.Decision {
	case AllowOnce, AllowAlways:
		if ans.AcceptDefinition {
			warn(o.acceptAnswered(ctx, t, requestReview(rv)))
		}
		if ans.Decision == AllowAlways {
			warn(o.allowAlways(t, ans.Scope))
		}
		return DecisionAsked, ""
	}
	return DecisionDenied, fmt.Sprintf("%s was denied by the user", t.ID)
}

// safeApprove asks a, turning a panic into an error, which the gate counts
// as a denial: a broken approver must neither allow nor take the sidecar
// down.
func safeApprove(ctx context.Context, a Approver, req Request) (ans Answer, err error) {
	defer func() {
		if r := recover(); r != nil {
			ans, err = Answer{}, fmt.Errorf("approver panicked: %v", r)
		}
	}()
	return a.Approve(ctx, req)
}

// allowAlways records an "always allow" answer: for the rest of the session
// at once, and as an allow rule in the chosen file. It returns what the
// user should be told when the answer will not last as they meant: the
// rule could not be saved, or it was saved to the local file of a project
// that is not trusted, where allow rules are ignored until `freecode trust`
// (the session allow holds either way); or the organization's rules leave
// it no effect (noAlwaysAllow), and then it is an allow for this call only,
// neither kept nor saved.
func (o *Orchestrator) allowAlways(t *Tool, scope Scope) string {
	id := t.ID
	set := o.perms.Load()
	if set == nil {
		// No rules were loaded: the session allow needs a set to live in.
		o.perms.CompareAndSwap(nil, &permissions.Set{})
		set = o.perms.Load()
	}
	// Asked again with the rules as they are now, which may have changed
	// while the question was open; an approver may also answer what it
	// was not offered.
	if why := noAlwaysAllow(set, t); why != "" {
		return fmt.Sprintf("%s was allowed this once only: %s, so the \"always allow\" answer was neither kept nor saved", id, why)
	}
	if err := set.AllowSession(id); err != nil {
		return fmt.Sprintf("%s could not be allowed for the session: %v", id, err)
	}
	src := permissions.SourceLocal
	if scope == ScopeUser || o.opts.ProjectDir == "" {
		src = permissions.SourceUser
	}
	path, err := permissions.AddScopeAllow(src, o.opts.UserDir, o.opts.ProjectDir, id)
	switch {
	case err != nil:
		return fmt.Sprintf("%s is allowed for this session only: the %s allow rule could not be saved: %v", id, src, err)
	case src == permissions.SourceLocal && !set.ProjectTrusted():
		return fmt.Sprintf("%s is allowed for this session only: the allow rule saved to %s takes effect once the project is trusted (`freecode trust`), since an untrusted project's allow rules are ignored", id, tildePath(path))
	}
	return ""
}

// noAlwaysAllow says why an "always allow" answer for t could take no
// effect under set, or "" if it could: the organization allows only its
// own allow rules, or one of its deny or ask rules decides t, which no
// allow rule of any other source loosens. An ask rule of the user's or a
// project's is not a reason: the user may take it out, and the allow rule
// written applies from then on.
func noAlwaysAllow(set *permissions.Set, t *Tool) string {
	if set.ManagedOnly() {
		return "your organization allows only its own allow rules"
	}
	d := set.Decide(t.ID, t.alias, t.ReadOnly)
	if d.Rule == nil || d.Rule.Source != permissions.SourceManaged {
		return ""
	}
	switch d.Effect {
	case permissions.Ask:
		return d.Reason + " asks before every call"
	case permissions.Deny:
		return d.Reason
	}
	return ""
}

// noApproverText explains a denial for lack of anyone to ask, naming the
// rule that would allow the call.
func (o *Orchestrator) noApproverText(t *Tool, d permissions.Decision) string {
	file := "~/.freecode/settings.json"
	if o.opts.UserDir != "" {
		if p, err := permissions.ScopeFile(permissions.SourceUser, o.opts.UserDir, ""); err == nil {
			file = tildePath(p)
		}
	}
	if d.Rule != nil && d.Rule.Source == permissions.SourceManaged {
		return fmt.Sprintf("%s needs permission (%s) and there is no one to ask; it is your organization's rule, which no rule of yours can lift", t.ID, d.Reason)
	}
	if d.Rule == nil && o.perms.Load().ManagedOnly() {
		return fmt.Sprintf("%s needs permission (%s) and there is no one to ask; your organization allows only its own allow rules, so no allow rule of yours would let it run", t.ID, d.Reason)
	}
	if d.Rule != nil {
		// An ask rule beats any allow rule: adding one would not help.
		return fmt.Sprintf("%s needs permission (%s) and there is no one to ask; an ask rule wins over allow rules, so remove %q from permissions.ask to let it run unasked", t.ID, d.Reason, d.Rule.Pattern)
	}
	return fmt.Sprintf("%s needs permission (%s) and there is no one to ask: add %q to permissions.allow in %s", t.ID, d.Reason, t.ID, file)
}

// tildePath shortens a path under the home directory to ~/….
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
		return "~/" + filepath.ToSlash(rel)
	}
	return p
}
