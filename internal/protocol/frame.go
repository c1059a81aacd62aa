package protocol

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"go.lsp.dev/jsonrpc2"
)

// What one frame may hold. The sidecar listens on a socket any local
// program can connect to, and reads what it is sent before it knows who
// sent it: nothing a frame announces may make it hold more than these.
const (
	// MaxHeader is the most bytes of a frame's header, its lines together
	// with their line ends. LSP's header is a line or two of a few dozen
	// bytes; a line without an end is refused once it reaches this.
	MaxHeader = 4 << 10
	// MaxFrame is the most bytes of a frame's body unless
	// StreamOptions.MaxFrame says otherwise: far above any message of the
	// protocol (a tool's arguments or result included: an MCP server's
	// own messages are capped at 16 MiB by default).
	MaxFrame = 64 << 20
)

// The errors a stream's reading ends with when a frame breaks a cap.
var (
	ErrHeaderTooLong = errors.New("frame header too long")
	ErrFrameTooLarge = errors.New("frame too large")
)

// bodyStep is what a frame's body buffer grows by at least while its bytes
// arrive: it grows with what was sent, not with what the header announced.
const bodyStep = 64 << 10

// keepBuf is the largest body buffer kept for the next frame; a larger
// one, left by a large message, goes back to the collector.
const keepBuf = 1 << 20

// frameReader reads LSP frames within the caps above.
type frameReader struct {
	in   *bufio.Reader // MaxHeader bytes: a header line fits, or is refused
	body []byte        // the last frame's body, reused
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{in: bufio.NewReaderSize(r, MaxHeader)}
}

// read reads the next frame's body, refusing one that announces more than
// limit bytes before reading any of it. The body is valid until the next
// read. n is the bytes read, header included.
func (f *frameReader) read(limit int) (body []byte, n int64, err error) {
	length, hlen, err := f.readHeader()
	if err != nil {
		return nil, 0, err
	}
	if length > limit {
		announced := strconv.Itoa(length)
		if length > overCap {
			announced = "over " + strconv.Itoa(overCap)
		}
		return nil, 0, fmt.Errorf("%w: %s bytes announced, at most %d taken", ErrFrameTooLarge, announced, limit)
	}
	if cap(f.body) > keepBuf {
		f.body = nil
	}
	buf := f.body[:0]
	for len(buf) < length {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(length-len(buf), max(len(buf), bodyStep)))
		}
		m, err := f.in.Read(buf[len(buf):min(cap(buf), length)])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // a header promised more
			}
			f.body = buf
			return nil, 0, err
		}
	}
	f.body = buf
	return buf, int64(hlen + length), nil
}

// readHeader reads a frame's header and returns its Content-Length and
// the header's size. Other fields (Content-Type) are ignored.
func (f *frameReader) readHeader() (length, n int, err error) {
	have := false
	for {
		line, err := f.in.ReadSlice('\n')
		n += len(line)
		switch {
		case err == bufio.ErrBufferFull || n > MaxHeader:
			return 0, 0, fmt.Errorf("%w: more than %d bytes", ErrHeaderTooLong, MaxHeader)
		case err == io.EOF && n == 0:
			return 0, 0, io.EOF // closed between frames
		case err == io.EOF:
			return 0, 0, io.ErrUnexpectedEOF
		case err != nil:
			return 0, 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, 0, jsonrpc2.ErrInvalidHeader
		}
		if bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			if length, ok = parseLength(bytes.TrimSpace(value)); !ok {
				return 0, 0, jsonrpc2.ErrInvalidHeader
			}
			have = true
		}
	}
	if !have || length <= 0 {
		return 0, 0, jsonrpc2.ErrInvalidHeader
	}
	return length, n, nil
}

// parseLength parses a Content-Length: decimal digits. A length past
// overCap, beyond every cap, is read as overCap+1, so that it is told from
// a malformed one without overflowing an int of any size.
func parseLength(v []byte) (int, bool) {
	if len(v) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if d := int(c - '0'); n <= (overCap-d)/10 {
			n = n*10 + d
		} else {
			n = overCap + 1
		}
	}
	return n, true
}

// overCap is a length past every cap a stream may have.
const overCap = 1 << 30
