package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// lineFilter reads a stdio server's stdout for stdioConn. A JSON-RPC
// decoder treats any non-JSON byte as fatal, and real servers print banners
// and log lines to stdout and sometimes send huge results. The filter hands
// on only complete, valid JSON lines, skips (and logs) the rest (stdioConn
// skips JSON that is no JSON-RPC message the same way), and drains
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

	head []byte // the current line's start, up to headSize bytes

	// onProgress, if set, sees each progress notification before the SDK
	// does, in stream order (see Conn.noteProgress).
	onProgress func(line []byte)
	// onDrop, if set, is told of every message the filter drops (over max,
	// or nested too deep), in a sentence that says why.
	onDrop func(msg string)
	// redact, if set, masks the session's secrets in a skipped line's
	// excerpt.
	redact func(string) string
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
	f.head = f.head[:0]
	oversized := false
	size := 0
	for {
		chunk, err := f.br.ReadSlice('\n')
		if size == 0 {
			// The envelope's first keys, to answer for a dropped response.
			f.head = append(f.head, chunk[:min(len(chunk), headSize)]...)
		}
		size += len(chunk)
		switch {
		case err == nil || (errors.Is(err, io.EOF) && len(chunk) > 0):
			if errors.Is(err, io.EOF) {
				f.err = io.EOF
			}
			line := chunk
			if !oversized && len(f.long) > 0 {
				f.long = append(f.long, chunk...)
				line = f.long
			}
			if oversized || len(line) > f.max {
				f.drop(fmt.Sprintf("%d bytes, over maxMessageBytes (%d)", size, f.max))
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

// headSize bounds what of a dropped line is kept to find its id.
const headSize = 1024

// maxDepth is how deep encoding/json (and so the SDK) nests before it
// refuses a value.
const maxDepth = 10000

// drop reports a JSON-RPC message the filter cannot hand on and why. If it
// was a response, the filter hands on an error response with its id
// instead, so the call it answers fails now, saying why, rather than at its
// timeout.
func (f *lineFilter) drop(why string) {
	id, response := envelopeHead(f.head)
	what := "a message from the server"
	if response {
		what = "the server's answer"
	}
	msg := fmt.Sprintf("dropped %s: %s", what, why)
	f.logger.Warn("dropped a message from server stdout", "reason", why, "response", response)
	if f.onDrop != nil {
		f.onDrop(msg)
	}
	if !response {
		return
	}
	line, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": codeDropped, "message": msg},
	})
	if err == nil {
		f.pending = append(line, '\n')
	}
}

// codeDropped is the JSON-RPC error code of an answer the filter dropped,
// or that stdioConn could not read: the SDK's internal error, since the
// server did answer.
const codeDropped = -32603

// envelopeHead reads the first top-level keys of a JSON-RPC message from
// the start of its line: its id, and whether it is a response (an id and
// no method before the result or error). A message whose id comes after
// its result, or whose head is cut before the id, is not known as one.
func envelopeHead(head []byte) (id json.RawMessage, response bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch key {
		case "result", "error":
			return id, id != nil
		case "method", "params":
			return nil, false
		case "jsonrpc", "id":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, false
			}
			if key == "id" {
				id = v
			}
		default:
			return nil, false
		}
	}
}

// NestsDeeper reports whether the JSON value in b nests deeper than max
// levels of objects and arrays; strings are skipped, so brackets in them
// do not count.
func NestsDeeper(b []byte, max int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// accept sets pending to line if it is one JSON value; otherwise it logs the
// line (cut short) as server output, or drops it as a message too deeply
// nested to decode.
func (f *lineFilter) accept(line []byte, noNewline bool) {
	body := bytes.TrimSpace(line)
	if len(body) == 0 {
		return
	}
	if body[0] == '{' || body[0] == '[' {
		if json.Valid(body) {
			if noNewline {
				line = append(body[:len(body):len(body)], '\n')
			}
			if f.onProgress != nil && bytes.Contains(body, progressMethod) {
				f.onProgress(body)
			}
			f.pending = line
			return
		}
		if NestsDeeper(body, maxDepth) {
			f.drop(fmt.Sprintf("nested deeper than the %d levels a JSON decoder here reads", maxDepth))
			return
		}
	}
	f.noise(body, "not JSON")
}

// noise logs, at debug level, a line of the server's stdout that is no
// JSON-RPC message and is skipped: servers print banners and logs there,
// and that must never cost the session. Only an excerpt is shown, masked
// before it is cut so a secret across the cut cannot show in part.
func (f *lineFilter) noise(line []byte, why string) {
	if !f.logger.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	const show, secretRoom = 200, 4096
	s := string(bytes.TrimSpace(line[:min(len(line), show+secretRoom)]))
	if f.redact != nil {
		s = f.redact(s)
	}
	if len(s) > show {
		s = strings.ToValidUTF8(s[:show], "") + "…"
	}
	f.logger.Debug("skipped server stdout: not a JSON-RPC message", "why", why, "line", s)
}
