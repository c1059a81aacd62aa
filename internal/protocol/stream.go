package protocol

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/hoptrace"
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
	// ends: the peer closed its end or went away, or sent a frame past a
	// cap. A jsonrpc2.Conn goes on running the requests it had read; the
	// owner of the connection cancels them here.
	OnReadEnd func(err error)
	// MaxFrame, if set, is asked before each frame is read for the most
	// bytes its body may have (default MaxFrame, at most 1 GiB): a
	// connection that has not shown who it is yet gets less. A frame that announces more ends
	// the reading with ErrFrameTooLarge, before any of its body is read.
	MaxFrame func() int
	// MaxPendingWrites, if positive, is the most messages that may wait to
	// be written at once: a peer that reads nothing blocks every write,
	// and each waiting one holds its message and its goroutine. The write
	// past it fails with ErrWriteBacklog, and OnWriteBacklog is called,
	// once; it should end the connection.
	MaxPendingWrites int
	OnWriteBacklog   func()
}

// ErrWriteBacklog is the error of a write made while StreamOptions'
// MaxPendingWrites others wait: the peer does not read what it is sent.
var ErrWriteBacklog = errors.New("too many messages wait to be written: the peer reads nothing")

// NewStream returns rwc as a jsonrpc2.Stream framed like LSP
// (Content-Length headers), what both ends of the protocol speak, reading
// frames within the caps of MaxHeader and StreamOptions.MaxFrame.
//
// Writes are not cancelled with their context: the response to a request
// whose context was cancelled ($/cancelRequest, or its frontend going away)
// must still go out, and a write that has begun cannot stop halfway
// through a frame anyway.
func NewStream(rwc io.ReadWriteCloser, opts *StreamOptions) jsonrpc2.Stream {
	s := &stream{rwc: rwc, frames: newFrameReader(rwc)}
	if opts != nil {
		s.opts = *opts
	}
	return s
}

// frameStream is jsonrpc2's frame-level fast path: a Conn that finds it
// on its stream reads frames without decoding them twice.
type frameStream interface {
	ReadFrame(ctx context.Context) ([]byte, int64, error)
	WriteFrame(ctx context.Context, data []byte) (int64, error)
}

type stream struct {
	rwc    io.ReadWriteCloser
	frames *frameReader // only the read loop reads
	opts   StreamOptions
	end    readEnd

	backlog backlog

	// writeMu serializes writes, so that each frame is one write, and
	// guards wbuf.
	writeMu sync.Mutex
	wbuf    []byte
}

var _ frameStream = (*stream)(nil)

func (s *stream) ended(err error) { s.end.tell(&s.opts, err) }

// readEnd tells OnReadEnd, once, why a stream's reading ended.
type readEnd struct{ once sync.Once }

func (r *readEnd) tell(opts *StreamOptions, err error) {
	r.once.Do(func() {
		if opts.OnReadEnd != nil {
			opts.OnReadEnd(err)
		}
	})
}

// frameLimit is the most bytes the next frame's body may have.
func (o *StreamOptions) frameLimit() int {
	if o.MaxFrame != nil {
		return min(o.MaxFrame(), overCap)
	}
	return MaxFrame
}

// decodeFrame decodes a frame ReadFrame returned.
func decodeFrame(body []byte, n int64, err error) (jsonrpc2.Message, int64, error) {
	if err != nil {
		return nil, n, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	return msg, n, err
}

// ReadFrame reads the body of the next frame.
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	if err := ctx.Err(); err != nil {
		s.ended(err)
		return nil, 0, err
	}
	body, n, err := s.frames.read(s.opts.frameLimit())
	if err != nil {
		s.ended(err)
		return nil, 0, err
	}
	if s.opts.Trace != nil {
		s.opts.Trace(Received, body)
	}
	hoptrace.Mark(hoptrace.FromRequest)
	return body, n, nil
}

// Read reads and decodes the next message.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	return decodeFrame(s.ReadFrame(ctx))
}

// headerRoom is the room kept before a body in wbuf for its header.
const headerRoom = len("Content-Length: ") + 20 + len("\r\n\r\n")

// Write encodes and writes msg. jsonrpc2.Conn writes every message here
// (its own faster path is not open to a wrapper): the message is encoded
// once, after room for its header, for the trace and the frame both.
func (s *stream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	return s.write(func(buf []byte) []byte { return jsonrpc2.AppendMessage(buf, msg) })
}

// WriteFrame writes one frame of body data.
func (s *stream) WriteFrame(_ context.Context, data []byte) (int64, error) {
	return s.write(func(buf []byte) []byte { return append(buf, data...) })
}

// write writes the body appendBody appends as one frame, in one write.
func (s *stream) write(appendBody func([]byte) []byte) (int64, error) {
	if !s.backlog.enter(&s.opts) {
		return 0, ErrWriteBacklog
	}
	defer s.backlog.leave()
	s.writeMu.Lock()
	buf := appendBody(append(s.wbuf[:0], make([]byte, headerRoom)...))
	body := buf[headerRoom:]
	if s.opts.Trace != nil {
		s.opts.Trace(Sent, body)
	}
	var head [headerRoom]byte
	h := append(strconv.AppendInt(append(head[:0], "Content-Length: "...), int64(len(body)), 10), "\r\n\r\n"...)
	start := headerRoom - len(h)
	copy(buf[start:], h)
	hoptrace.Take(hoptrace.FromAnswer, "c answer → the frontend's answer written")
	hoptrace.Take(hoptrace.FromRequest, "d request → answer written: the whole sidecar")
	n, err := s.rwc.Write(buf[start:])
	if cap(buf) > keepBuf {
		buf = nil // a large message's buffer is not kept for the small ones
	}
	s.wbuf = buf
	s.writeMu.Unlock()
	if s.opts.AfterWrite != nil {
		s.opts.AfterWrite(err)
	}
	return int64(n), err
}

// Close closes the underlying connection.
func (s *stream) Close() error { return s.rwc.Close() }

// backlog counts the writes of a stream begun and not done, against
// StreamOptions.MaxPendingWrites.
type backlog struct {
	pending atomic.Int64
	once    sync.Once
}

// enter counts a write in; false, with OnWriteBacklog called (once) and
// AfterWrite told, if MaxPendingWrites others wait. Call leave once an
// entered write is done.
func (b *backlog) enter(opts *StreamOptions) bool {
	max := opts.MaxPendingWrites
	if max <= 0 {
		b.pending.Add(1)
		return true
	}
	if b.pending.Add(1) <= int64(max) {
		return true
	}
	b.pending.Add(-1)
	b.once.Do(func() {
		if opts.OnWriteBacklog != nil {
			opts.OnWriteBacklog()
		}
	})
	if opts.AfterWrite != nil {
		opts.AfterWrite(ErrWriteBacklog)
	}
	return false
}

func (b *backlog) leave() { b.pending.Add(-1) }

// NewConn returns a jsonrpc2.Conn over rwc that speaks the protocol: LSP
// framing (NewStream) and Codec. Start it with Go.
func NewConn(rwc io.ReadWriteCloser, opts *StreamOptions) jsonrpc2.Conn {
	return jsonrpc2.NewConn(NewStream(rwc, opts), jsonrpc2.WithCodec(Codec{}))
}
