package orchestrator

import (
	"context"
	"errors"

	"github.com/freecode/freecode/internal/manifest"
)

// What a Runner tells the orchestrator about a call that failed, and what
// the orchestrator tells a Runner about the call it runs. The orchestrator
// declares both, so that whatever runs a tool (the workspace's MCP
// connections, a built-in) is written against them, not the other way
// round.

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

type callKey struct{}

type callVal struct {
	id       string
	answerer any
	tasks    TaskMode
	slot     *taskSlot // where a task the call started is put (tasks.go)
}

// withCall returns ctx carrying the call's id, the batch's Answerer
// (ExecOptions.Answerer) and what it does with tasks, for the Runner.
func withCall(ctx context.Context, id string, answerer any, mode TaskMode, slot *taskSlot) context.Context {
	return context.WithValue(ctx, callKey{}, callVal{id, answerer, mode, slot})
}

// CallOf returns the id of the call a Runner's CallTool is making, and
// the Answerer of its batch (nil without one): what the Runner hands on
// to whatever the tool's server may ask during the call. The orchestrator
// neither knows the Answerer's type nor asks it. Both are zero for a ctx
// the orchestrator did not make.
func CallOf(ctx context.Context) (id string, answerer any) {
	v, _ := ctx.Value(callKey{}).(callVal)
	return v.id, v.answerer
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
