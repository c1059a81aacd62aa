package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sseTransport wraps the SDK's legacy SSE transport:
//   - the SDK ties the long-lived GET stream to the context given to
//     Connect, which is our connect timeout: detach it, and cancel it only
//     if Connect itself does not finish in time, or when the session closes;
//   - a POST that fails (a legacy server never answers a POST for a session
//     it lost) ends the session, and errors wrap ErrConnectionLost.
type sseTransport struct {
	inner *mcpsdk.SSEClientTransport
}

func (t *sseTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(streamCtx)
	if !stop() {
		// ctx ended while connecting.
		if err == nil {
			conn.Close()
		}
		cancel()
		return nil, errors.Join(err, ctx.Err())
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &sseConn{Connection: conn, cancel: cancel}, nil
}

type sseConn struct {
	mcpsdk.Connection
	cancel context.CancelFunc // ends the GET stream

	mu     sync.Mutex
	lost   error // why the session ended, if not by Close
	closed bool
}

func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if err == nil || ctx.Err() != nil {
		return err
	}
	return c.lose(fmt.Errorf("sending to the legacy SSE endpoint: %w", err))
}

func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil || ctx.Err() != nil {
		return msg, err
	}
	c.mu.Lock()
	lost, closed := c.lost, c.closed
	c.mu.Unlock()
	switch {
	case lost != nil:
		return nil, lost
	case closed:
		return nil, err
	}
	return nil, c.lose(fmt.Errorf("legacy SSE stream ended: %w", err))
}

// lose ends the session for a transport failure and returns the error that
// in-flight calls get.
func (c *sseConn) lose(cause error) error {
	c.mu.Lock()
	if c.lost == nil && !c.closed {
		c.lost = fmt.Errorf("%w: %w", ErrConnectionLost, cause)
	}
	lost := c.lost
	c.mu.Unlock()
	c.Connection.Close()
	c.cancel()
	if lost == nil {
		return cause
	}
	return lost
}

func (c *sseConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	err := c.Connection.Close()
	c.cancel()
	return err
}
