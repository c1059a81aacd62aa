package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server may ask the client something while it serves a request: fill in
// a form or open a URL (elicitation/create), or run a model
// (sampling/createMessage). Only whoever made that request can answer: the
// frontend whose batch the tool call belongs to. That frontend is the
// request's Answerer, carried in the request's context (WithAnswerer) down to
// the Conn.
//
// How the Conn finds the Answerer of a server's request:
//
//   - Under the newest protocol (2026-07-28) the server does not send a
//     request of its own: its answer to the call asks for input, and the
//     go-sdk answers that with the client's handlers inside the call, on the
//     call's context. The Answerer is the call's, exactly.
//   - Under older protocols the server sends elicitation/create or
//     sampling/createMessage on its own, and nothing in it names the call
//     (over stdio there is no way to say it; over HTTP the stream it comes
//     on does, but the go-sdk does not pass that on). The go-sdk hands it to
//     the handler on a context of the connection's. So the Conn keeps the
//     requests in flight on each session with their Answerer: if they all
//     have one Answerer, that is the one asked (the call's id too, if only one
//     call is in flight); if requests of different Answerers are in flight,
//     nobody can tell whose the question is, and nobody is asked.
//
// Nobody to ask means an elicitation is declined and a sampling request is
// refused with a JSON-RPC error, as the MCP specification has a client do
// when its user says no.

// An Answerer answers, for whoever made a request, what a server asks while
// it serves that request. A nil function means that kind of question is
// not answered (an elicitation is declined, sampling refused).
type Answerer struct {
	// Elicit answers an elicitation: a form (Params.Mode "form", with
	// Params.RequestedSchema) or a URL to open (Mode "url"). The result's
	// Action is "accept" (with Content for a form), "decline" or "cancel".
	// Defaults of the form's schema fill the fields the answer leaves out.
	Elicit func(ctx context.Context, req *ElicitRequest) (*mcpsdk.ElicitResult, error)
	// Sample answers a sampling request: the frontend owns the model and
	// the user's consent. An error refuses the request; a *jsonrpc.Error
	// is sent to the server as it is.
	Sample func(ctx context.Context, req *SampleRequest) (*mcpsdk.CreateMessageResult, error)
}

// ElicitRequest is a server's elicitation/create.
type ElicitRequest struct {
	Server string
	// CallID is the id of the call during which the server asked; "" when
	// several calls of the Answerer were in flight on the server.
	CallID string
	Params *mcpsdk.ElicitParams
}

// SampleRequest is a server's sampling/createMessage.
type SampleRequest struct {
	Server string
	CallID string // as in ElicitRequest
	Params *mcpsdk.CreateMessageParams
}

// CodeSamplingRejected is the JSON-RPC error code a sampling request that
// nobody answers is refused with: the MCP specification's example code for
// a user who rejects sampling.
const CodeSamplingRejected = -1

type answererKey struct{}

type answererVal struct {
	answerer *Answerer
	// of, if set, says the Answerer when the server asks (WithAnswererOf).
	of     func() *Answerer
	callID string
}

// resolved returns v with the Answerer of now.
func (v answererVal) resolved() answererVal {
	if v.of != nil {
		v.answerer, v.of = v.of(), nil
	}
	return v
}

// WithAnswerer returns ctx carrying answerer, who answers for whoever
// makes the request of id callID ("" for a request that is no tool call),
// for the Conn's tool calls, resource reads and prompt gets made with it.
// Answerers are told apart by pointer: every request a frontend makes
// should carry the same *Answerer.
func WithAnswerer(ctx context.Context, answerer *Answerer, callID string) context.Context {
	return context.WithValue(ctx, answererKey{}, answererVal{answerer: answerer, callID: callID})
}

// WithAnswererOf is WithAnswerer for a request whose Answerer may change
// while it runs: the following of a task that another frontend may adopt.
// of says who answers when the server asks (nil: nobody), and is called
// then, under a lock of the Conn's: it must return at once. What it
// returns is told apart by pointer as any Answerer.
func WithAnswererOf(ctx context.Context, of func() *Answerer, callID string) context.Context {
	return context.WithValue(ctx, answererKey{}, answererVal{of: of, callID: callID})
}

// withoutAnswerer returns ctx without an Answerer. A session is connected
// on the context of the request that started the Conn (a call, a
// resource read waking a server on demand), and the go-sdk derives the
// contexts of the server's requests from it for the session's whole
// life: an Answerer left in it would be asked every question the server
// sends on its own, whoever's call it came during.
func withoutAnswerer(ctx context.Context) context.Context {
	if ctx.Value(answererKey{}) == nil {
		return ctx
	}
	return noAnswerer{ctx}
}

// noAnswerer is a context that hides its parent's Answerer.
type noAnswerer struct{ context.Context }

func (c noAnswerer) Value(key any) any {
	if _, ok := key.(answererKey); ok {
		return nil
	}
	return c.Context.Value(key)
}

// inflight is one request of an Answerer in flight on a session.
type inflight struct {
	answererVal
	ctx context.Context // the request's
}

// track records a request on s with ctx's Answerer (none, if ctx has none:
// an Answerer of its own) until the returned function is called.
func (c *Conn) track(ctx context.Context, s *session) func() {
	v, _ := ctx.Value(answererKey{}).(answererVal)
	e := &inflight{answererVal: v, ctx: ctx}
	c.inflightMu.Lock()
	c.inflight[s.cs] = append(c.inflight[s.cs], e)
	c.inflightMu.Unlock()
	return func() {
		c.inflightMu.Lock()
		defer c.inflightMu.Unlock()
		list := slices.DeleteFunc(c.inflight[s.cs], func(x *inflight) bool { return x == e })
		if len(list) == 0 {
			delete(c.inflight, s.cs)
			return
		}
		c.inflight[s.cs] = list
	}
}

// answererOf finds the Answerer of a server's request that came with ctx on
// session cs (see the comment at the top of this file). callCtx is the
// context of the request it came during, when that is known, so that the
// question ends with it. why says why there is no Answerer.
func (c *Conn) answererOf(ctx context.Context, cs *mcpsdk.ClientSession) (v answererVal, callCtx context.Context, why string) {
	if v, ok := ctx.Value(answererKey{}).(answererVal); ok {
		return v.resolved(), nil, ""
	}
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	list := c.inflight[cs]
	switch {
	case len(list) == 0:
		return answererVal{}, nil, "no request of FreeCode's is in flight on the server"
	case len(list) == 1:
		return list[0].resolved(), list[0].ctx, ""
	}
	v = list[0].resolved()
	for _, e := range list[1:] {
		r := e.resolved()
		if r.answerer != v.answerer {
			return answererVal{}, nil, "requests of different frontends are in flight on the server, and the question does not say whose it is"
		}
		if r.callID != v.callID {
			v.callID = ""
		}
	}
	return v, nil, ""
}

// withCall returns ctx, also cancelled when the request that caused the
// question ends (callCtx, if known): nobody waits for the answer then.
func withCall(ctx, callCtx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if callCtx == nil {
		return ctx, cancel
	}
	stop := context.AfterFunc(callCtx, cancel)
	return ctx, func() { stop(); cancel() }
}

// declareAnswerers sets the client's elicitation and sampling handlers and
// declares those capabilities, as ConnOptions asks.
func (c *Conn) declareAnswerers(opts *mcpsdk.ClientOptions) {
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
	decline := &mcpsdk.ElicitResult{Action: "decline"}
	v, callCtx, why := c.answererOf(ctx, req.Session)
	if v.answerer == nil || v.answerer.Elicit == nil {
		if why == "" {
			why = "the request's frontend answers no elicitation"
		}
		c.logger.Info("elicitation declined", "why", why)
		return decline, nil
	}
	ctx, cancel := withCall(ctx, callCtx)
	defer cancel()
	res, err := v.answerer.Elicit(ctx, &ElicitRequest{Server: c.srv.Name, CallID: v.callID, Params: req.Params})
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
		if req.Params.Mode != "url" {
			content, err := withDefaults(req.Params.RequestedSchema, res.Content)
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
	v, callCtx, why := c.answererOf(ctx, req.Session)
	if v.answerer == nil || v.answerer.Sample == nil {
		if why == "" {
			why = "the request's frontend does no sampling"
		}
		c.logger.Info("sampling refused", "why", why)
		return nil, &jsonrpc.Error{Code: CodeSamplingRejected, Message: "sampling refused: " + why}
	}
	ctx, cancel := withCall(ctx, callCtx)
	defer cancel()
	res, err := v.answerer.Sample(ctx, &SampleRequest{Server: c.srv.Name, CallID: v.callID, Params: req.Params})
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
