package mcpwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// A Filter reads the newline-delimited JSON-RPC a stdio peer writes, here
// a local MCP server's stdout. A JSON-RPC decoder treats any non-JSON byte
// as fatal, and real servers print banners and log lines to stdout and
// sometimes send huge results. The filter hands on only complete, valid
// JSON lines, skips (and logs) the rest (its reader skips JSON that is no
// JSON-RPC message the same way, with Skip), and drains a line longer than
// max without ever holding more than max bytes of it, so the session
// survives both.
//
// It reads through a LineReader, so a line that fits in the read buffer is
// handed on without a copy: the slice Next returns points into that
// buffer. A Filter is read by one goroutine at a time.
type Filter struct {
	rc     io.Closer
	lines  *LineReader
	max    int
	logger *slog.Logger
	opts   FilterOptions

	pending  []byte // the next good line, '\n' included
	err      error  // sticky read error, returned once pending is taken
	skipping bool   // a line over max is being read past
}

// FilterOptions are a Filter's callbacks, each optional. They run on the
// goroutine that calls Next, in stream order, and must not block.
type FilterOptions struct {
	// OnProgress sees each line that holds a progress notification, in
	// stream order, before the reader decodes it: the SDK hands
	// notifications on through a queue of its own, so one sent just before
	// a result can reach its handler after the result, and counting them
	// here lets a caller wait for the handler to catch up.
	OnProgress func(line []byte)
	// OnDrop is told of every message the filter drops (over max, or
	// nested too deep), in a sentence that says why.
	OnDrop func(msg string)
	// Redact masks the session's secrets in a skipped line's excerpt.
	Redact func(string) string
}

var progressMethod = []byte(`"notifications/progress"`)

// NewFilter returns a Filter over r that hands on lines of at most max
// bytes and logs what it skips or drops to logger. opts may be nil.
func NewFilter(r io.ReadCloser, max int, logger *slog.Logger, opts *FilterOptions) *Filter {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Filter{rc: r, lines: NewLineReader(r, max), max: max, logger: logger}
	if opts != nil {
		f.opts = *opts
	}
	return f
}

// Close closes the reader, which unblocks a pending Next.
func (f *Filter) Close() error { return f.rc.Close() }

// Next returns the next valid JSON line, '\n' included. The slice is valid
// until the next call. A read error is returned once the lines before it
// are taken. An interrupted read (Interrupted) returns its error and
// loses nothing: the next call goes on where it stopped.
func (f *Filter) Next() ([]byte, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return nil, f.err
		}
		if err := f.next(); err != nil {
			return nil, err
		}
	}
	line := f.pending
	f.pending = nil
	return line, nil
}

// next reads one line and sets pending if it is a JSON message, or err;
// it returns an interrupted read's error.
func (f *Filter) next() error {
	if f.skipping {
		return f.skip()
	}
	line, err := f.lines.ReadLine()
	switch {
	case err == nil:
		// The reader's cap leaves the line's end out; maxMessageBytes
		// counts it.
		if len(line) > f.max {
			f.drop(line, fmt.Sprintf("%d bytes, over maxMessageBytes (%d)", len(line), f.max))
			return nil
		}
		f.accept(line)
	case errors.Is(err, ErrLineTooLong):
		f.skipping = true
		return f.skip()
	case Interrupted(err):
		return err
	default:
		f.err = err
	}
	return nil
}

// skip reads past a line over max, and drops it.
func (f *Filter) skip() error {
	head, size, err := f.lines.SkipLine()
	if Interrupted(err) {
		return err
	}
	f.skipping = false
	if err != nil && !errors.Is(err, io.EOF) {
		f.err = err
		return nil
	}
	f.err = err // the stream may end with the line
	f.drop(head, fmt.Sprintf("%d bytes, over maxMessageBytes (%d)", size, f.max))
	return nil
}

// headSize bounds what of a dropped line is kept to find its id.
const headSize = 1024

// MaxDepth is how deep encoding/json (and so the SDK) nests before it
// refuses a value: a line that goes deeper cannot be decoded, by Decode nor
// by the SDK.
const MaxDepth = 10000

// drop reports a JSON-RPC message the filter cannot hand on, of which line
// is the start, and why. If it was a response, the filter hands on an error
// response with its id instead, so the call it answers fails now, saying
// why, rather than at its timeout.
func (f *Filter) drop(line []byte, why string) {
	id, response := envelopeHead(line[:min(len(line), headSize)])
	what := "a message from the server"
	if response {
		what = "the server's answer"
	}
	msg := fmt.Sprintf("dropped %s: %s", what, why)
	f.logger.Warn("dropped a message from server stdout", "reason", why, "response", response)
	if f.opts.OnDrop != nil {
		f.opts.OnDrop(msg)
	}
	if !response {
		return
	}
	line, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": CodeDropped, "message": msg},
	})
	if err == nil {
		f.pending = append(line, '\n')
	}
}

// CodeDropped is the JSON-RPC error code of an answer the filter dropped,
// or that its reader could not decode: the SDK's internal error, since the
// peer did answer.
const CodeDropped = -32603

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
func (f *Filter) accept(line []byte) {
	body := bytes.TrimSpace(line)
	if len(body) == 0 {
		return
	}
	if body[0] == '{' || body[0] == '[' {
		if json.Valid(body) {
			if line[len(line)-1] != '\n' { // the stream's last line
				line = append(body[:len(body):len(body)], '\n')
			}
			if f.opts.OnProgress != nil && bytes.Contains(body, progressMethod) {
				f.opts.OnProgress(body)
			}
			f.pending = line
			return
		}
		if NestsDeeper(body, MaxDepth) {
			f.drop(line, fmt.Sprintf("nested deeper than the %d levels a JSON decoder here reads", MaxDepth))
			return
		}
	}
	f.Skip(body, "not JSON")
}

// Skip logs, at debug level, a line of the server's stdout that is no
// JSON-RPC message and is skipped: servers print banners and logs there,
// and that must never cost the session. Only an excerpt is shown, masked
// before it is cut so a secret across the cut cannot show in part. The
// filter skips what is not JSON; its reader calls Skip for JSON that is no
// message.
func (f *Filter) Skip(line []byte, why string) {
	if !f.logger.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	const show, secretRoom = 200, 4096
	s := string(bytes.TrimSpace(line[:min(len(line), show+secretRoom)]))
	if f.opts.Redact != nil {
		s = f.opts.Redact(s)
	}
	if len(s) > show {
		s = strings.ToValidUTF8(s[:show], "") + "…"
	}
	f.logger.Debug("skipped server stdout: not a JSON-RPC message", "why", why, "line", s)
}
