package mcpwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// LineBufSize is a LineReader's read buffer: most MCP messages fit in it
// whole, and are handed on without a copy.
const LineBufSize = 64 << 10

// ErrLineTooLong is LineReader.ReadLine's error for a line over its cap.
var ErrLineTooLong = errors.New("line over the size cap")

// A LineReader cuts a stdio stream into lines, for both ends: the
// client's Filter reads a server's stdout through one, the gateway's stdio
// transport its client's input. A line that fits in the read buffer is
// handed on without a copy; a longer one is gathered in a buffer of its
// own, up to the cap. A LineReader is read by one goroutine at a time.
type LineReader struct {
	br  *bufio.Reader
	max int

	// long holds a line that outgrew the read buffer, up to max bytes;
	// after ErrLineTooLong, the first headSize bytes of that line.
	long []byte

	// The line ReadLine stopped in, over max: its size so far, whether
	// its end was read, and the stream's error if it ended it.
	over    bool
	size    int
	ended   bool
	overErr error

	// resume is set when a read was interrupted midway through a line
	// (Interrupted): long holds what came of it, and the next ReadLine
	// goes on with it.
	resume bool
}

// Interrupted reports whether err is a read interrupted by a deadline
// (os.ErrDeadlineExceeded), which the stdio client sets to take its turn at
// a server's stdout: a LineReader and a Filter return it and lose nothing,
// and their next call goes on where the read stopped.
func Interrupted(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// NewLineReader returns a LineReader over r whose lines hold at most max
// bytes of text.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, LineBufSize), max: max}
}

// ReadLine returns the next line, its newline included; the stream's last
// line may have none, and then the next call returns the stream's end
// (io.EOF). The slice is valid until the next call. A line whose text,
// without the "\r\n" that ends it, is over max bytes is not held:
// ReadLine returns ErrLineTooLong as soon as it knows, and SkipLine (or the
// next ReadLine) reads past the rest of it. An interrupted read
// (Interrupted) returns its error, and the next call goes on with the line.
func (r *LineReader) ReadLine() ([]byte, error) {
	if r.over {
		if _, _, err := r.SkipLine(); err != nil {
			return nil, err
		}
	}
	if !r.resume {
		if cap(r.long) > 1<<20 {
			r.long = nil // do not keep a big line's buffer for the session's life
		}
		r.long = r.long[:0]
		r.size = 0
	}
	r.resume = false
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.size += len(chunk)
		full := errors.Is(err, bufio.ErrBufferFull)
		cut := Interrupted(err)
		// The line's end is trimmed off only when the whole is over the
		// cap: the common line is spared the trim.
		if len(r.long)+len(chunk) > r.max && len(r.long)+len(bytes.TrimRight(chunk, "\r\n")) > r.max {
			r.over, r.ended, r.overErr = true, !full && !cut, nil
			if r.ended {
				r.overErr = err
			}
			if n := headSize - len(r.long); n > 0 {
				r.long = append(r.long, chunk[:min(len(chunk), n)]...)
			}
			r.long = r.long[:min(len(r.long), headSize)]
			return nil, ErrLineTooLong
		}
		switch {
		case full:
			r.long = append(r.long, chunk...)
			continue
		case cut:
			r.long = append(r.long, chunk...)
			r.resume = true
			return nil, err
		case len(r.long) > 0:
			chunk = append(r.long, chunk...)
			r.long = chunk
		}
		if err == nil || errors.Is(err, io.EOF) && len(chunk) > 0 {
			return chunk, nil // at EOF: the last line, without its newline
		}
		return nil, err
	}
}

// SkipLine reads past the rest of the line ReadLine refused with
// ErrLineTooLong, holding none of it, and returns its first bytes (at
// most headSize, valid until the next ReadLine) and its whole size, its
// newline included. The error is the stream's, if it ended the line. An
// interrupted read (Interrupted) returns its error alone, and the next
// call goes on skipping.
func (r *LineReader) SkipLine() (head []byte, size int, err error) {
	if !r.over {
		return nil, 0, nil
	}
	for !r.ended {
		chunk, e := r.br.ReadSlice('\n')
		r.size += len(chunk)
		switch {
		case Interrupted(e):
			return nil, 0, e
		case !errors.Is(e, bufio.ErrBufferFull):
			r.ended, r.overErr = true, e
		}
	}
	r.over = false
	return r.long, r.size, r.overErr
}

// A Reader is the read side of a stdio connection, either end's: Read
// hands the go-sdk one message at a time, and what a line holds comes from
// its Source, one message or a batch, whose messages after the first wait
// in the Reader's queue.
type Reader struct {
	src   Source
	queue []jsonrpc.Message // the rest of a batch
}

// A Source says what each line of a stdio stream holds, as its end reads
// it (what it skips, refuses or answers itself is its own).
type Source interface {
	// Next returns what the next line holds: one message, or a batch's
	// messages, or neither when it holds nothing to hand on. An error
	// ends the connection.
	Next(ctx context.Context) (msg jsonrpc.Message, batch []jsonrpc.Message, err error)
}

// NewReader returns a Reader of the lines src reads.
func NewReader(src Source) *Reader { return &Reader{src: src} }

// Read returns the next message: the next of the last batch, else the
// next line's. It is called by one goroutine at a time (the go-sdk's
// reader).
func (r *Reader) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(r.queue) > 0 {
			msg := r.queue[0]
			r.queue = r.queue[1:]
			return msg, nil
		}
		msg, batch, err := r.src.Next(ctx)
		switch {
		case err != nil:
			return nil, err
		case msg != nil:
			return msg, nil // one message, the common line: no queue
		case len(batch) > 0:
			r.queue = batch[1:]
			return batch[0], nil
		}
	}
}

// DecodeBatch returns the messages of a line that is a JSON array, each
// decoded by decode, which may leave one out (nil) or refuse the batch (an
// error). An array that does not decode, or is empty, is an error.
func DecodeBatch(line []byte, decode func(raw []byte) (jsonrpc.Message, error)) ([]jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		msg, err := decode(raw)
		if err != nil {
			return nil, err
		}
		if msg != nil {
			msgs = append(msgs, msg)
		}
	}
	return msgs, nil
}
