package orchestrator

import (
	"context"
	"errors"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/freecode/freecode/internal/manifest"
)

// What the orchestrator tells a Runner about the call it runs, and what a
// Runner tells the orchestrator about a call that failed. The
// orchestrator declares both, so that whatever runs a tool (the
// workspace's MCP connections, a built-in) is written against them, not
// the other way round.

// Errors a Runner's CallTool wraps to say what became of a call. The
// orchestrator tells them apart with errors.Is: a call whose connection
// was lost is retried once if it is read-only, and each result says what
// happened.
var (
	// ErrConnectionLost means the connection to the tool's server was
	// lost while the call was in flight: the server may or may not have
	// run it.
	ErrConnectionLost = errors.New("connection lost during the call")
	// ErrNotConnected means the tool's server is not connected: the call
	// was never sent.
	ErrNotConnected = errors.New("server not connected")
)

// RefusedError means the tool's server refused the call before running
// it: it wants the user to sign in, or to grant it more access.
type RefusedError struct {
	// Reason says why, for the result: what the server asks for.
	Reason string
	Err    error
}

func (e *RefusedError) Error() string { return e.Err.Error() }

func (e *RefusedError) Unwrap() error { return e.Err }

// Call is one call of a tool, as the orchestrator hands it to the tool's
// Runner: everything the call is, in one value, so that nothing of it
// rides in the context.
type Call struct {
	// ID is the call's id (ToolCall.CallID): what the frontend knows the
	// call by, told with each question its server asks.
	ID string
	// Name is the tool's name on its server (Tool.Name); Args its
	// arguments, validated against its input schema.
	Name string
	Args map[string]any
	// OnProgress is given the call's progress notifications; never nil.
	OnProgress func(Progress)
	// Tasks is what the batch does with a call its server runs as a task
	// (tasks.go).
	Tasks TaskMode
	// Asker is whoever answers what the tool's server asks a person
	// during the call (ExecOptions.Asker); nil: nobody.
	Asker Asker
	// Trace is the span context drawn for this attempt's span, which is
	// made after the batch (timeline.go): a Runner makes its
	// request a child of it and sends the trace context on to the server
	// (MCP's params._meta). Invalid when nothing is traced.
	Trace trace.SpanContext
}

// Outcome is what a call came to: its result and, for a call its server
// runs as a task under TasksTracked or TasksReturned, the task it started
// (its Result then says so).
type Outcome struct {
	Result *mcpsdk.CallToolResult
	Task   *Task
}

// Asker answers, for the person behind a batch, what a tool's server asks
// of them while it runs one of its calls: an elicitation (a form to fill
// in, a URL to open), a sampling request (a model to run), a sign-in for
// more access than the server's sign-in gave (an OAuth 403
// insufficient_scope). The frontend that sent the batch is its Asker in
// the sidecar; the CLI's asks on its terminal. The orchestrator hands the
// batch's Asker to each call's Runner and asks it nothing itself.
//
// server names the tool's server, callID the call the question comes
// during ("" when the server did not say which of several of the
// Asker's calls it is about). Askers are told apart with ==, as the
// frontends they stand for: an Asker is a pointer, or another comparable
// value, and a frontend gives the same one with each of its batches.
type Asker interface {
	// Elicit answers an elicitation: a form (p.Mode "form", with
	// p.RequestedSchema) or a URL to open (Mode "url"). The result's
	// Action is "accept" (with Content for a form), "decline" or
	// "cancel"; a nil result or an error declines.
	Elicit(ctx context.Context, server, callID string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error)
	// Sample answers a sampling request: the frontend owns the model and
	// the user's consent. An error refuses the request.
	Sample(ctx context.Context, server, callID string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error)
	// SignInOpener returns what shows the person the authorization
	// server's page, to sign in to server again for more access: a
	// function that returns once the page at url is handed over (a
	// browser started, an editor asked to open it), not when the person
	// is done, and fails when nothing could show it. Nil: nobody can be
	// asked, and the call is refused for want of that access.
	SignInOpener(server string) func(ctx context.Context, url string) error
}

// OutcomeUnknownText is what a result says of a call whose answer was lost
// and that was not sent again: the words a frontend and the CLI show.
const OutcomeUnknownText = "outcome unknown, not retried"

// Retryable reports whether a call of t whose answer was lost may be sent
// again without the user's say: only if the tool declares that it changes
// nothing (readOnlyHint) or that a second call changes nothing more
// (idempotentHint). MCP 2026-07-28 has no resumable streams, so a broken
// response stream loses the answer for good; a write sent twice may
// happen twice. This is the one rule for every path that might repeat a
// call: a lost connection, a broken stream, a one-shot command's reconnect.
// A tool new on its server and not accepted yet is not: as its
// readOnlyHint, its hints count once the user accepted it.
func Retryable(t *Tool) bool {
	if t.Review != nil && t.Review.Kind == manifest.KindNew {
		return false
	}
	return t.ReadOnly || t.Idempotent
}

// outcomeUnknown reports whether a failed call's result is "outcome
// unknown, not retried": its answer was lost, and it could not be sent
// again. A retried call that lost its answer again says so in its text,
// not this way: its tool may be repeated, so running twice is no harm.
func outcomeUnknown(ctx context.Context, t *Tool, err error) bool {
	return ctx.Err() == nil && errors.Is(err, ErrConnectionLost) && !Retryable(t) &&
		!errors.Is(err, errIdleTimeout) && !errors.Is(err, errHardTimeout)
}
