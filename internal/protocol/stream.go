package protocol

import (
	"context"
	"io"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// Direction says which way a traced message went.
type Direction string

// The directions of a traced message.
const (
	Received Direction = "recv"
	Sent     Direction = "send"
)

// StreamOptions configure NewStream. A nil *StreamOptions means defaults.
type StreamOptions struct {
	// Trace, if set, is given the JSON of every message read or written
	// (--trace, a test's log). The body is valid only during the call.
	Trace func(dir Direction, body []byte)
	// AfterWrite, if set, is called after each message is written, with
	// the error of the write: what a connection that must end once its
	// answer is out waits for.
	AfterWrite func(err error)
	// OnReadEnd, if set, is called once, with the error, when reading
	// ends: the peer closed its end or went away. A jsonrpc2.Conn goes on
	// running the requests it had read; the owner of the connection
	// cancels them here.
	OnReadEnd func(err error)
}

// NewStream returns rwc as a jsonrpc2.Stream framed like LSP
// (Content-Length headers), what both ends of the protocol speak.
//
// Writes are not cancelled with their context: the response to a request
// whose context was cancelled ($/cancelRequest, or its frontend going away)
// must still go out, and a write that has begun cannot stop halfway
// through a frame anyway.
func NewStream(rwc io.ReadWriteCloser, opts *StreamOptions) jsonrpc2.Stream {
	s := &stream{inner: jsonrpc2.NewHeaderStream(rwc)}
	s.frames, _ = s.inner.(frameStream)
	if opts != nil {
		s.opts = *opts
	}
	return s
}

// frameStream is jsonrpc2's frame-level fast path, which its header stream
// implements: a Conn that finds it on its stream reads frames without
// decoding them twice.
type frameStream interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

type stream struct {
	inner   jsonrpc2.Stream
	frames  frameStream
	opts    StreamOptions
	endOnce sync.Once
}

var _ frameStream = (*stream)(nil)

func (s *stream) ended(err error) {
	s.endOnce.Do(func() {
		if s.opts.OnReadEnd != nil {
			s.opts.OnReadEnd(err)
		}
	})
}

// ReadFrame reads the body of the next frame.
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	body, n, err := s.frames.ReadFrame(ctx)
	if err != nil {
		s.ended(err)
		return nil, n, err
	}
	if s.opts.Trace != nil {
		s.opts.Trace(Received, body)
	}
	return body, n, nil
}

// WriteFrame writes one frame of body data.
func (s *stream) WriteFrame(ctx context.Context, data []byte) (int64, error) {
	if s.opts.Trace != nil {
		s.opts.Trace(Sent, data)
	}
	n, err := s.frames.WriteFrame(context.WithoutCancel(ctx), data)
	if s.opts.AfterWrite != nil {
		s.opts.AfterWrite(err)
	}
	return n, err
}

// Read reads and decodes the next message.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	body, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, n, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	return msg, n, err
}

// Write encodes and writes msg. jsonrpc2.Conn writes every message here
// (its own faster path is not open to a wrapper): a traced message is
// encoded once, for the trace and the frame both.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if s.opts.Trace != nil {
		body, err := jsonrpc2.EncodeMessage(msg)
		if err != nil {
			return 0, err
		}
		return s.WriteFrame(ctx, body)
	}
	n, err := s.inner.Write(context.WithoutCancel(ctx), msg)
	if s.opts.AfterWrite != nil {
		s.opts.AfterWrite(err)
	}
	return n, err
}

// Close closes the underlying connection.
func (s *stream) Close() error { return s.inner.Close() }

// NewConn returns a jsonrpc2.Conn over rwc that speaks the protocol: LSP
// framing (NewStream) and Codec. Start it with Go.
func NewConn(rwc io.ReadWriteCloser, opts *StreamOptions) jsonrpc2.Conn {
	return jsonrpc2.NewConn(NewStream(rwc, opts), jsonrpc2.WithCodec(Codec{}))
}
