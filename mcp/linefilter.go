package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
)

// lineFilter reads a stdio server's stdout for stdioConn. A JSON-RPC
// decoder treats any non-JSON byte as fatal, and real servers print banners
// and log lines to stdout and sometimes send huge results. The filter hands
// on only complete, valid JSON lines, skips (and logs) the rest, and drains
// a line longer than max without ever holding more than max bytes of it, so
// the session survives both.
//
// A line that fits in the bufio buffer is handed on without a copy: the
// slice nextLine returns points into the bufio buffer.
type lineFilter struct {
	rc     io.Closer
	br     *bufio.Reader
	max    int
	logger *slog.Logger

	pending []byte // the next good line, '\n' included
	long    []byte // a line that outgrew the bufio buffer, up to max bytes
	err     error  // sticky read error, returned once pending is taken

	// onProgress, if set, sees each progress notification before the SDK
	// does, in stream order (see Conn.noteProgress).
	onProgress func(line []byte)
}

var progressMethod = []byte(`"notifications/progress"`)

// filterBufSize is the bufio buffer: most MCP messages fit in it whole.
const filterBufSize = 64 << 10

func newLineFilter(r io.ReadCloser, max int, logger *slog.Logger) *lineFilter {
	return &lineFilter{rc: r, br: bufio.NewReaderSize(r, filterBufSize), max: max, logger: logger}
}

// Close closes the underlying stdout pipe, which unblocks a pending nextLine.
func (f *lineFilter) Close() error { return f.rc.Close() }

// nextLine returns the next valid JSON line, '\n' included. The slice is
// valid until the next call.
func (f *lineFilter) nextLine() ([]byte, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return nil, f.err
		}
		f.next()
	}
	line := f.pending
	f.pending = nil
	return line, nil
}

// next reads one line and sets pending if it is a JSON message, or err.
func (f *lineFilter) next() {
	if cap(f.long) > 1<<20 {
		f.long = nil // do not keep a big line's buffer for the session's life
	}
	f.long = f.long[:0]
	oversized := false
	size := 0
	for {
		chunk, err := f.br.ReadSlice('\n')
		size += len(chunk)
		switch {
		case err == nil || (errors.Is(err, io.EOF) && len(chunk) > 0):
			if errors.Is(err, io.EOF) {
				f.err = io.EOF
			}
			if oversized {
				f.logger.Warn("dropped an oversized line from server stdout", "bytes", size, "maxMessageBytes", f.max)
				return
			}
			line := chunk
			if len(f.long) > 0 {
				f.long = append(f.long, chunk...)
				line = f.long
			}
			if len(line) > f.max {
				f.logger.Warn("dropped an oversized line from server stdout", "bytes", size, "maxMessageBytes", f.max)
				return
			}
			f.accept(line, err != nil)
			return
		case errors.Is(err, bufio.ErrBufferFull):
			if oversized {
				continue
			}
			if len(f.long)+len(chunk) > f.max {
				oversized = true
				f.long = nil // release it: the rest of the line is only counted
				continue
			}
			f.long = append(f.long, chunk...)
		default:
			f.err = err
			return
		}
	}
}

// accept sets pending to line if it is one JSON value; otherwise it logs the
// line (cut short) as server output.
func (f *lineFilter) accept(line []byte, noNewline bool) {
	body := bytes.TrimSpace(line)
	if len(body) == 0 {
		return
	}
	if (body[0] == '{' || body[0] == '[') && json.Valid(body) {
		if noNewline {
			line = append(body[:len(body):len(body)], '\n')
		}
		if f.onProgress != nil && bytes.Contains(body, progressMethod) {
			f.onProgress(body)
		}
		f.pending = line
		return
	}
	const show = 200
	if len(body) > show {
		body = body[:show]
	}
	f.logger.Info("server stdout (not a JSON-RPC message)", "line", string(body))
}
