package mcpwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/freecode/freecode/internal/hoptrace"
)

// A Writer writes newline-delimited JSON-RPC, the stdio framing of MCP:
// each message is one line, sent in one write, so that messages written
// concurrently never interleave. The line's buffer is kept for the next
// message. Both of FreeCode's stdio ends write through one: the client's
// (to a server's stdin) and `freecode mcp serve`'s. Its methods are safe
// for concurrent use.
type Writer struct {
	w io.Writer

	mu  sync.Mutex
	buf []byte // guarded by mu
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes msg as one line (AppendMessage).
func (lw *Writer) Write(msg jsonrpc.Message) error {
	return lw.writeLine(func(buf []byte) ([]byte, error) { return AppendMessage(buf, msg) })
}

// WriteBatch writes msgs as one line holding a JSON array of them: the
// answer to a batch.
func (lw *Writer) WriteBatch(msgs []jsonrpc.Message) error {
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

func (lw *Writer) writeLine(appendLine func([]byte) ([]byte, error)) error {
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
	hoptrace.Stage(hoptrace.FromRequest, "8 request → its line to the server written")
	_, err = lw.w.Write(data)
	hoptrace.Mark(hoptrace.FromSent)
	return err
}

// maxKeptWriteBuf bounds the buffer a Writer keeps between messages,
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
