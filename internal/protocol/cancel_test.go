package protocol

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// failingWrites is a connection whose writes fail once fail is set; its
// reads come from a pipe.
type failingWrites struct {
	*io.PipeReader
	fail atomic.Bool
}

func (c *failingWrites) Write(p []byte) (int, error) {
	if c.fail.Load() {
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

func (c *failingWrites) Close() error { return c.PipeReader.Close() }

// A request Detach released runs on the connection's context, not
// jsonrpc2's per-request one; what jsonrpc2 cancels that one for besides
// the connection's end, a write that failed, reaches it through CancelAll
// from AfterWrite, as the sidecar and the frontend wire it.
func TestDetachedRequestCancelledByFailedWrite(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	c := &failingWrites{PipeReader: pr}
	var reqs Requests
	conn := NewConn(c, &StreamOptions{AfterWrite: func(err error) {
		if err != nil {
			reqs.CancelAll()
		}
	}})
	running, cancelled, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	conn.Go(t.Context(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.Method() != "wait" {
			return "answered", nil
		}
		ctx, done := reqs.Detach(ctx, req)
		defer done()
		close(running)
		select {
		case <-ctx.Done():
			close(cancelled)
		case <-stop: // the test failed
		}
		return nil, ctx.Err()
	})
	defer conn.Close()
	defer close(stop)
	io.WriteString(pw, frameOf(`{"jsonrpc":"2.0","id":1,"method":"wait"}`))
	<-running
	c.fail.Store(true)
	io.WriteString(pw, frameOf(`{"jsonrpc":"2.0","id":2,"method":"other"}`)) // its answer fails to go out
	select {
	case <-cancelled:
	case <-time.After(hangGuard):
		t.Fatal("the request running when a write failed was not cancelled")
	}
}

// frameOf is body as an LSP frame.
func frameOf(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}
