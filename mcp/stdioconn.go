package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the go-sdk Transport over a local server's pipes, with
// stdout read through our lineFilter.
//
// It is faster than the SDK's mcp.IOTransport, which decodes each line twice before the SDK decodes it a third
// time (a json.Decoder pass in a goroutine of its own, then an attempt to
// read the line as a batch array, each with a 32 KiB buffer) and hands the
// message over a channel to the SDK's reader goroutine. Here the SDK's
// reader goroutine reads the next filtered line itself and decodes it once
// with the SDK's own decoder: one goroutine hop and two decodes fewer per
// message, same wire format, same batch support.
type stdioTransport struct {
	filter *lineFilter
	stdin  io.WriteCloser
}

// Connect implements mcpsdk.Transport.
func (t *stdioTransport) Connect(context.Context) (mcpsdk.Connection, error) {
	return newStdioConn(t.filter, t.stdin), nil
}

// stdioConn is the newline-delimited JSON-RPC connection. Read is called
// by one goroutine at a time (the SDK's reader); Write may be concurrent.
type stdioConn struct {
	filter *lineFilter
	queue  []jsonrpc.Message // the rest of a batch array

	stdin io.WriteCloser
	out   *LineWriter // over stdin

	closeOnce sync.Once
	closeErr  error
}

func newStdioConn(filter *lineFilter, stdin io.WriteCloser) *stdioConn {
	return &stdioConn{filter: filter, stdin: stdin, out: NewLineWriter(stdin)}
}

// SessionID implements mcpsdk.Connection; stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// Read returns the next message. Close unblocks it: closing the stdout
// pipe fails the pending read.
//
// A JSON line that is no JSON-RPC message (a structured log line, a bare
// value) is skipped like any other stdout noise: a read error would end the
// session and every call in flight. A line that is an answer, by its id, but
// not a valid one becomes an error answer for that id, so the call it
// answers fails at once saying what was wrong, not at its timeout.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(c.queue) > 0 {
			msg := c.queue[0]
			c.queue = c.queue[1:]
			return msg, nil
		}
		line, err := c.filter.nextLine()
		if err != nil {
			return nil, err
		}
		if line[skipSpace(line, 0)] == '[' {
			c.queue = c.decodeBatch(line)
			continue
		}
		// One message, the common line: returned without a queue.
		if msg := c.decodeOne(line); msg != nil {
			return msg, nil
		}
	}
}

// decodeBatch returns the messages of a line that is a JSON array: a
// batch's; none for noise.
func (c *stdioConn) decodeBatch(line []byte) []jsonrpc.Message {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil || len(raws) == 0 {
		c.filter.noise(line, "an array, not a batch of messages")
		return nil
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		if msg := c.decodeOne(raw); msg != nil {
			msgs = append(msgs, msg)
		}
	}
	return msgs
}

// decodeOne decodes one message; an invalid answer becomes an error
// answer for its id, anything else invalid is noise (nil).
func (c *stdioConn) decodeOne(raw []byte) jsonrpc.Message {
	msg, err := decodeMessage(raw)
	if err == nil {
		return msg
	}
	if id, ok := answerID(raw); ok {
		why := fmt.Sprintf("the server's answer is not a valid JSON-RPC response: %v", err)
		c.filter.logger.Warn("invalid answer on server stdout", "why", err)
		return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: codeDropped, Message: why}}
	}
	c.filter.noise(raw, err.Error())
	return nil
}

// answerID returns the id of raw if it is a JSON object that looks like an
// answer: a valid, non-null id and no method.
func answerID(raw []byte) (jsonrpc.ID, bool) {
	var env struct {
		ID     any              `json:"id"`
		Method *json.RawMessage `json:"method"`
	}
	if json.Unmarshal(raw, &env) != nil || env.ID == nil || env.Method != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(env.ID)
	return id, err == nil && id.IsValid()
}

// Write sends msg as one line, in one write.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.out.Write(msg)
}

// LineWriter writes newline-delimited JSON-RPC, the stdio framing of MCP:
// each message is one line, sent in one write, so that messages written
// concurrently never interleave. The line's buffer is kept for the next
// message. Both of FreeCode's stdio ends write through one: the client's
// (to a server's stdin) and `freecode mcp serve`'s.
type LineWriter struct {
	w io.Writer

	mu  sync.Mutex
	buf []byte // guarded by mu
}

// NewLineWriter returns a LineWriter over w.
func NewLineWriter(w io.Writer) *LineWriter { return &LineWriter{w: w} }

// Write writes msg as one line (AppendMessage).
func (lw *LineWriter) Write(msg jsonrpc.Message) error {
	return lw.writeLine(func(buf []byte) ([]byte, error) { return AppendMessage(buf, msg) })
}

// WriteBatch writes msgs as one line holding a JSON array of them: the
// answer to a batch.
func (lw *LineWriter) WriteBatch(msgs []jsonrpc.Message) error {
	return lw.writeLine(func(buf []byte) ([]byte, error) {
		buf = append(buf, '[')
		for i, msg := range msgs {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = AppendMessage(buf, msg); err != nil {
				return nil, fmt.Errorf("encoding batch message: %w", err)
			}
		}
		return append(buf, ']'), nil
	})
}

func (lw *LineWriter) writeLine(appendLine func([]byte) ([]byte, error)) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	data, err := appendLine(lw.buf[:0])
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if cap(data) <= maxKeptWriteBuf {
		lw.buf = data
	}
	_, err = lw.w.Write(data)
	return err
}

// maxKeptWriteBuf bounds the buffer a LineWriter keeps between messages,
// so one huge message does not pin its size for the session.
const maxKeptWriteBuf = 64 << 10

// AppendMessage appends msg's wire form to buf: one line, without its
// newline. It is the encoder of FreeCode's stdio connections, client side
// (requests to a server) and server side (`freecode mcp serve`'s answers).
//
// A request (every call and notification a client sends) and a successful
// response are written directly: their params or result are the SDK's
// marshal output, compact and valid, so re-encoding the whole envelope
// through jsonrpc.EncodeMessage (reflection, a fresh buffer, a compaction
// pass over the params or result) buys nothing. Anything else (an error
// response, raw JSON that is not plainly one line) takes EncodeMessage,
// which also validates it.
func AppendMessage(buf []byte, msg jsonrpc.Message) ([]byte, error) {
	start := len(buf)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !safeRaw(m.Params) {
			break
		}
		buf = append(buf, `{"jsonrpc":"2.0"`...)
		var ok bool
		if buf, ok = appendID(buf, m.ID, true); !ok {
			break
		}
		if m.Method != "" {
			buf = append(buf, `,"method":`...)
			buf = appendJSONString(buf, m.Method)
		}
		if len(m.Params) > 0 {
			buf = append(buf, `,"params":`...)
			buf = append(buf, m.Params...)
		}
		return append(buf, '}'), nil
	case *jsonrpc.Response:
		if m.Error != nil || len(m.Result) == 0 || !safeRaw(m.Result) {
			break
		}
		buf = append(buf, `{"jsonrpc":"2.0"`...)
		var ok bool
		if buf, ok = appendID(buf, m.ID, false); !ok {
			break
		}
		buf = append(buf, `,"result":`...)
		buf = append(buf, m.Result...)
		return append(buf, '}'), nil
	}
	return appendEncoded(buf[:start], msg)
}

// appendID appends the "id" member of a message with id; a notification's
// (no id, when allowed) adds nothing. It reports false for an id it does
// not write plainly, which leaves the message to the SDK's encoder.
func appendID(buf []byte, id jsonrpc.ID, noneOK bool) ([]byte, bool) {
	switch v := id.Raw().(type) {
	case nil:
		return buf, noneOK
	case int64:
		buf = append(buf, `,"id":`...)
		return strconv.AppendInt(buf, v, 10), true
	case string:
		buf = append(buf, `,"id":`...)
		return appendJSONString(buf, v), true
	}
	return buf, false
}

func appendEncoded(buf []byte, msg jsonrpc.Message) ([]byte, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("marshaling message: %w", err)
	}
	return append(buf, data...), nil
}

// safeRaw reports whether raw can go on the wire as it is: one line that
// starts like a JSON value (params are an object or array). Marshal output
// always qualifies; anything else is re-encoded, which validates it.
func safeRaw(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return true
	}
	if raw[0] != '{' && raw[0] != '[' {
		return false
	}
	return bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0
}

// appendJSONString appends s as a JSON string. Plain ASCII, as method
// names and our ids are, is copied between quotes; anything else goes
// through json.Marshal.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f || b == '"' || b == '\\' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(buf, q...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// Close closes both pipes: the server sees EOF on stdin, and a pending
// Read returns.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.stdin.Close(), c.filter.Close())
	})
	return c.closeErr
}
