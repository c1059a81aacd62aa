package orchestrator

import (
	"context"
	"errors"
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
}

// withCall returns ctx carrying the call's id and the batch's Answerer
// (ExecOptions.Answerer), for the Runner.
func withCall(ctx context.Context, id string, answerer any) context.Context {
	return context.WithValue(ctx, callKey{}, callVal{id, answerer})
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
