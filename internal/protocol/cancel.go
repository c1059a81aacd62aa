package protocol

import (
	"context"
	"sync"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"
)

// Requests runs the requests of one connection that take a while, each on
// its own goroutine, and cancels one on $/cancelRequest.
//
// It stands in for jsonrpc2.CancelHandler, which derives a context from
// every call's context before the handler runs: a call answered on the
// read loop then has its context recycled while the goroutine that
// context.WithCancel started still watches it. Here a call's context is
// derived only once the call is released (Detach), after which jsonrpc2
// never recycles it. A handler that answers on the read loop must not keep
// its ctx either: jsonrpc2.DetachContext gives one it may keep.
//
// The context Detach returns is derived from the connection's (the one
// its Go was given, through jsonrpc2.DetachContext), not from jsonrpc2's
// per-request one: that is a context type of the library's own, so a
// context.WithCancel of it would cost a goroutine per request to watch it
// (the standard library can only link cancellation to its own types). What
// jsonrpc2 cancels it for besides the connection's end, a write that failed
// (the peer can be answered no more), the owner of the connection passes on
// with CancelAll (StreamOptions.AfterWrite).
type Requests struct {
	// mu guards inFlight.
	mu       sync.Mutex
	inFlight map[jsonrpc2.ID]context.CancelFunc
}

// Detach releases req from the read loop (jsonrpc2.Async), so that the
// messages after it are read while it runs, and returns the context to run
// it with, which $/cancelRequest naming it cancels, and CancelAll. Call done
// when it is answered.
func (r *Requests) Detach(ctx context.Context, req *jsonrpc2.Request) (_ context.Context, done func()) {
	jsonrpc2.Async(ctx)
	ctx, cancel := context.WithCancel(jsonrpc2.DetachContext(ctx))
	if !req.IsCall() {
		return ctx, cancel
	}
	id := req.ID()
	r.mu.Lock()
	if r.inFlight == nil {
		r.inFlight = make(map[jsonrpc2.ID]context.CancelFunc)
	}
	r.inFlight[id] = cancel
	r.mu.Unlock()
	return ctx, func() {
		r.mu.Lock()
		delete(r.inFlight, id)
		r.mu.Unlock()
		cancel()
	}
}

// CancelAll cancels every request running: a write to the peer failed, so
// none of them can be answered.
func (r *Requests) CancelAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cancel := range r.inFlight {
		cancel()
	}
}

// Cancel handles $/cancelRequest: the request it names, if still running,
// has its context cancelled. An id it cannot read is ignored, as a cancel
// that comes after the answer is.
func (r *Requests) Cancel(params jsonrpc2.RawMessage) {
	var p lsp.CancelParams
	if err := lsp.Unmarshal(params, &p); err != nil {
		return
	}
	var id jsonrpc2.ID
	switch v := p.ID.(type) {
	case lsp.Integer:
		id = jsonrpc2.NewNumberID(int64(v))
	case lsp.String:
		id = jsonrpc2.NewStringID(string(v))
	default:
		return
	}
	r.mu.Lock()
	cancel := r.inFlight[id]
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
