package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/mcp/oauth"
)

// A server may ask the client something while it serves a request: fill in
// a form or open a URL (elicitation/create), run a model
// (sampling/createMessage), or, over HTTP, sign in again for more access
// (a 403 insufficient_scope). Only the person behind that request can
// answer: its Asker, which the request brings with it (CallOptions.Asker,
// ReadResource's and GetPrompt's asker, FollowOptions.AskerOf), never in
// its context.
//
// How the Conn finds the request a server's question belongs to:
//
//   - A question the go-sdk asks inside the request: under the newest
//     protocol (2026-07-28) the server sends no request of its own, its
//     answer to the call asks for input and the go-sdk runs the client's
//     handlers inside the call; a 403 comes back on the request's own POST.
//     The Conn hands the go-sdk each request on a context that names it
//     (begin, requestKey) and reads it back there: the request is known
//     exactly. A context is the one thing the go-sdk carries from a
//     request down to what it runs for it; the value is set on no context
//     but the one given to the go-sdk for that request, and read by the
//     Conn alone.
//   - A request of the server's own, elicitation/create or
//     sampling/createMessage before 2026-07-28: nothing in it names the
//     request it comes during (over stdio nothing can; over HTTP the stream
//     it comes on does, but the go-sdk does not pass that on), and the
//     go-sdk runs the handler on a context of the session's. A server asks
//     only while it serves a request of the client's, so the rule goes by
//     the requests in flight on the session: with one, the question is
//     that request's; with several, all of one Asker, it is that Asker's,
//     without a call id (which of its calls is not known); with none, or
//     with requests of different Askers, it is nobody's, since asking one
//     of them could show a person another's question.
//
// Nobody to ask means an elicitation is declined and a sampling request is
// refused with a JSON-RPC error, as the MCP specification has a client do
// when its user says no. A sign-in for more access the request's Asker
// cannot show (or of a request without one) goes to oauth.Options.OpenURL.

// An Asker answers, for whoever made a request, what the server asks a
// person while it serves that request (orchestrator.Asker is the same
// interface, which the workspace hands on as it is). server names the
// Conn's server; callID the request's call ("" for a request that is no
// tool call, or when several of the Asker's calls are in flight and the
// question does not say which). Askers are told apart with ==: an Asker is
// a pointer, or another comparable value.
type Asker interface {
	// Elicit answers an elicitation: a form (p.Mode "form", with
	// p.RequestedSchema) or a URL to open (Mode "url"). The result's
	// Action is "accept" (with Content for a form), "decline" or
	// "cancel"; a nil result or an error declines. Defaults of the form's
	// schema fill the fields the answer leaves out.
	Elicit(ctx context.Context, server, callID string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error)
	// Sample answers a sampling request. An error refuses it; a
	// *jsonrpc.Error is sent to the server as it is.
	Sample(ctx context.Context, server, callID string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error)
	// SignInOpener returns what shows the person the sign-in page for
	// more access to server (an oauth.OpenURLFunc), nil when nobody can
	// be asked.
	SignInOpener(server string) func(ctx context.Context, url string) error
}

// CodeSamplingRejected is the JSON-RPC error code a sampling request that
// nobody answers is refused with: the MCP specification's example code for
// a user who rejects sampling.
const CodeSamplingRejected = -1

// asking is who answers the questions of one request: asker, or, when
// askerOf is set, whoever it says when the server asks (the following of
// a task another frontend may adopt, FollowOptions.AskerOf); callID is
// the call's id.
type asking struct {
	callID  string
	asker   Asker
	askerOf func() Asker
}

// who is the Asker of now.
func (a *asking) who() Asker {
	if a.askerOf != nil {
		return a.askerOf()
	}
	return a.asker
}

// inflight is one request of FreeCode's in flight on a session.
type inflight struct {
	asking
	// ctx is the request's own: a question it causes ends with it.
	ctx   context.Context
	probe answerProbe // what became of a call's POST (lostanswer.go)
}

type requestKey struct{}

// requestOf returns the request whose context the go-sdk handed on as
// ctx, nil for any other context (a session's).
func requestOf(ctx context.Context) *inflight {
	r, _ := ctx.Value(requestKey{}).(*inflight)
	return r
}

// begin records a request of a on session s until the returned end is
// called, and returns the context to give the go-sdk for it, which names
// it (see the top of this file).
func (c *Conn) begin(ctx context.Context, s *session, a asking) (context.Context, *inflight, func()) {
	r := &inflight{asking: a, ctx: ctx}
	c.inflightMu.Lock()
	c.inflight[s.cs] = append(c.inflight[s.cs], r)
	c.inflightMu.Unlock()
	return context.WithValue(ctx, requestKey{}, r), r, func() {
		c.inflightMu.Lock()
		defer c.inflightMu.Unlock()
		list := slices.DeleteFunc(c.inflight[s.cs], func(x *inflight) bool { return x == r })
		if len(list) == 0 {
			delete(c.inflight, s.cs)
			return
		}
		c.inflight[s.cs] = list
	}
}

// asked is who answers one question, and the request it ends with.
type asked struct {
	asker  Asker
	callID string
	// until is the context of the request the question came during, when
	// the question came on the session's: it ends with that request.
	until context.Context
}

// nobody says why nobody answers a question of a, why if it is said
// already; "" when someone does.
func (a asked) nobody(why string) string {
	switch {
	case a.asker != nil:
		return ""
	case why == "":
		return "the request has nobody to ask"
	}
	return why
}

// whoAnswers finds who answers a question the server asked with ctx on
// session cs, by the rule at the top of this file. why says why nobody
// does.
func (c *Conn) whoAnswers(ctx context.Context, cs *mcpsdk.ClientSession) (a asked, why string) {
	if r := requestOf(ctx); r != nil {
		return asked{asker: r.who(), callID: r.callID}, ""
	}
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	list := c.inflight[cs]
	switch len(list) {
	case 0:
		return asked{}, "no request of FreeCode's is in flight on the server"
	case 1:
		return asked{asker: list[0].who(), callID: list[0].callID, until: list[0].ctx}, ""
	}
	a = asked{asker: list[0].who(), callID: list[0].callID}
	for _, r := range list[1:] {
		if r.who() != a.asker {
			return asked{}, "requests of different frontends are in flight on the server, and the question does not say whose it is"
		}
		if r.callID != a.callID {
			a.callID = ""
		}
	}
	return a, ""
}

// signInFor is who signs in again for more access for the request of ctx
// (oauth.FlowConfig.StepUp): its Asker's opener; nil for a context that
// names no request of an Asker.
func (c *Conn) signInFor(ctx context.Context) oauth.OpenURLFunc {
	r := requestOf(ctx)
	if r == nil {
		return nil
	}
	a := r.who()
	if a == nil {
		return nil
	}
	return a.SignInOpener(c.srv.Name)
}

// untilEnd returns ctx, also cancelled when until, the request that
// caused the question, ends (if known): nobody waits for the answer then.
func untilEnd(ctx, until context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if until == nil {
		return ctx, cancel
	}
	stop := context.AfterFunc(until, cancel)
	return ctx, func() { stop(); cancel() }
}

// declareAskers sets the client's elicitation and sampling handlers and
// declares those capabilities, as ConnOptions asks.
func (c *Conn) declareAskers(opts *mcpsdk.ClientOptions) {
	if c.opts.Elicitation {
		opts.ElicitationHandler = c.onElicit
		opts.Capabilities.Elicitation = &mcpsdk.ElicitationCapabilities{
			Form: &mcpsdk.FormElicitationCapabilities{},
			URL:  &mcpsdk.URLElicitationCapabilities{},
		}
	}
	if c.opts.Sampling {
		opts.CreateMessageHandler = c.onSample
		opts.Capabilities.Sampling = &mcpsdk.SamplingCapabilities{}
	}
}

// onElicit is the client's elicitation/create handler.
func (c *Conn) onElicit(ctx context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
	a, why := c.whoAnswers(ctx, req.Session)
	return c.elicit(ctx, a, why, req.Params)
}

// elicit asks a's Asker the elicitation p; why says why there is none.
func (c *Conn) elicit(ctx context.Context, a asked, why string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	decline := &mcpsdk.ElicitResult{Action: "decline"}
	if why := a.nobody(why); why != "" {
		c.logger.Info("elicitation declined", "why", why)
		return decline, nil
	}
	ctx, cancel := untilEnd(ctx, a.until)
	defer cancel()
	res, err := a.asker.Elicit(ctx, c.srv.Name, a.callID, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.logger.Info("elicitation declined: the frontend failed to answer", "error", err)
		return decline, nil
	}
	if res == nil {
		return decline, nil
	}
	switch res.Action {
	case "accept":
		if p.Mode != "url" {
			content, err := withDefaults(p.RequestedSchema, res.Content)
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			res.Content = content
		}
	case "decline", "cancel":
		res.Content = nil
	default:
		c.logger.Info("elicitation declined: the frontend answered an unknown action", "action", res.Action)
		return decline, nil
	}
	return res, nil
}

// onSample is the client's sampling/createMessage handler.
func (c *Conn) onSample(ctx context.Context, req *mcpsdk.CreateMessageRequest) (*mcpsdk.CreateMessageResult, error) {
	a, why := c.whoAnswers(ctx, req.Session)
	return c.sample(ctx, a, why, req.Params)
}

// sample asks a's Asker the sampling request p; why says why there is
// none.
func (c *Conn) sample(ctx context.Context, a asked, why string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
	if why := a.nobody(why); why != "" {
		c.logger.Info("sampling refused", "why", why)
		return nil, &jsonrpc.Error{Code: CodeSamplingRejected, Message: "sampling refused: " + why}
	}
	ctx, cancel := untilEnd(ctx, a.until)
	defer cancel()
	res, err := a.asker.Sample(ctx, c.srv.Name, a.callID, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if werr, ok := err.(*jsonrpc.Error); ok {
			return nil, werr
		}
		return nil, &jsonrpc.Error{Code: CodeSamplingRejected, Message: "sampling refused: " + err.Error()}
	}
	return res, nil
}

// withDefaults returns content with the default of every property of the
// form's schema that content leaves out, so that a form answered with its
// defaults untouched sends them (a required field with a default passes).
func withDefaults(schema any, content map[string]any) (map[string]any, error) {
	if schema == nil {
		return content, nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("elicitation schema: %w", err)
	}
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("elicitation schema: %w", err)
	}
	for name, p := range s.Properties {
		if _, ok := content[name]; ok || len(p.Default) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(p.Default, &v); err != nil {
			return nil, fmt.Errorf("elicitation schema: default of %s: %w", name, err)
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = v
	}
	return content, nil
}
