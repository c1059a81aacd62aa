package protocol

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/coder/websocket"
	"go.lsp.dev/jsonrpc2"
)

// NewMessageStream returns c as a jsonrpc2.Stream that carries one
// JSON-RPC message per WebSocket text frame, with no LSP header inside
// (the convention of vscode-ws-jsonrpc and monaco-languageclient): what a
// browser frontend speaks. The caps of StreamOptions hold as on
// NewStream: MaxFrame bounds each message, asked before it is read (the
// library stops reading a message at the cap, so nothing past it is
// held), and MaxPendingWrites the writes waiting. A message past the cap
// ends the reading with ErrFrameTooLarge, and so does a binary message,
// with an error of its own: the protocol is text.
//
// Writes are not cancelled with their context, as on NewStream; closing
// the stream (CloseNow) ends one that waits.
func NewMessageStream(c *websocket.Conn, opts *StreamOptions) jsonrpc2.Stream {
	s := &messageStream{c: c}
	if opts != nil {
		s.opts = *opts
	}
	return s
}

// NewMessageConn returns a jsonrpc2.Conn over c that speaks the protocol
// one message per frame (NewMessageStream) with Codec. Start it with Go.
func NewMessageConn(c *websocket.Conn, opts *StreamOptions) jsonrpc2.Conn {
	return jsonrpc2.NewConn(NewMessageStream(c, opts), jsonrpc2.WithCodec(Codec{}))
}

// ErrBinaryMessage ends a message stream whose peer sent a binary frame.
var ErrBinaryMessage = errors.New("a binary WebSocket message: the protocol is one JSON-RPC message per text message")

type messageStream struct {
	c       *websocket.Conn
	opts    StreamOptions
	end     readEnd
	backlog backlog

	// writeMu guards wbuf; the library serializes the frames themselves.
	writeMu sync.Mutex
	wbuf    []byte
}

var _ frameStream = (*messageStream)(nil)

func (s *messageStream) ended(err error) { s.end.tell(&s.opts, err) }

// ReadFrame reads the next message.
func (s *messageStream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		s.ended(err)
		return nil, 0, err
	}
	limit := s.opts.frameLimit()
	// Only the read loop reads, so the limit set is the next message's.
	s.c.SetReadLimit(int64(limit))
	// Not ctx: the library closes the connection when a read's context
	// ends, and the owner of the stream closes it when it means to.
	typ, body, err := s.c.Read(context.Background())
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		err = fmt.Errorf("%w: a message of more than %d bytes", ErrFrameTooLarge, limit)
	case err == nil && typ != websocket.MessageText:
		s.c.Close(websocket.StatusUnsupportedData, "binary messages are not taken: send JSON-RPC as text")
		err = ErrBinaryMessage
	}
	if err != nil {
		s.ended(err)
		return nil, 0, err
	}
	if s.opts.Trace != nil {
		s.opts.Trace(Received, body)
	}
	return body, int64(len(body)), nil
}

// Read reads and decodes the next message.
func (s *messageStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	return decodeFrame(s.ReadFrame(ctx))
}

// Write encodes msg and writes it as one text message.
func (s *messageStream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.write(func(buf []byte) []byte { return jsonrpc2.AppendMessage(buf, msg) })
}

// WriteFrame writes data as one text message.
func (s *messageStream) WriteFrame(_ context.Context, data []byte) (int64, error) {
	return s.write(func(buf []byte) []byte { return append(buf, data...) })
}

func (s *messageStream) write(appendBody func([]byte) []byte) (int64, error) {
	if !s.backlog.enter(&s.opts) {
		return 0, ErrWriteBacklog
	}
	defer s.backlog.leave()
	s.writeMu.Lock()
	body := appendBody(s.wbuf[:0])
	if s.opts.Trace != nil {
		s.opts.Trace(Sent, body)
	}
	err := s.c.Write(context.Background(), websocket.MessageText, body)
	n := len(body)
	if cap(body) > keepBuf {
		body = nil
	}
	s.wbuf = body
	s.writeMu.Unlock()
	if s.opts.AfterWrite != nil {
		s.opts.AfterWrite(err)
	}
	if err != nil {
		return 0, err
	}
	return int64(n), nil
}

// Close closes the connection at once.
func (s *messageStream) Close() error { return s.c.CloseNow() }
