package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// A tools/call over stdio is answered without the go-sdk decoding its
// result, and, where the pipe allows, without a goroutine hand-off:
//
//   - The SDK decodes a result twice (jsonrpc2's Await, then
//     CallToolResult.UnmarshalJSON), each time with a decoder that
//     allocates 32 KiB (docs/upstream/go-sdk-json-decoder.md): 64 KiB of
//     garbage per call, whose collection and sweeping cost more CPU than
//     the rest of the call. A result of the common shapes is read here in
//     one scan (decodeToolResult); any other (other content, annotations,
//     a task, an input-required result the SDK's multi-round-trip
//     middleware must see) is handed to the SDK as before.
//   - The SDK's reader goroutine reads every message and wakes the call's
//     goroutine with its answer, a thread's wake per call where a core is
//     idle (docs/upstream/go-sdk-reader-handoff.md). So the call's own
//     goroutine reads its answer, in the transport's Write, as the SDK's
//     Read would (stdioturn.go).
//
// The call's context carries an answerSlot (directAnswers, a sending
// middleware); the transport's Write notes the slot under the request's
// id. Whoever reads the answer (the call itself, another call, or the
// SDK's reader) puts the result in the slot. The SDK then learns that the
// call is over by an error: Write returns errAnswered, which the SDK's
// jsonrpc2 takes as a request the transport rejected (no harm to the
// connection) and retires the call with, at once; where the SDK's reader
// read the answer and the call waits in Await, the reader gives the SDK an
// error answer instead. Either way the error comes back up undecoded
// through the SDK's call and its multi-round-trip middleware, and
// directAnswers, outside them, turns it back into the result.

// answerSlot receives one tools/call's result from the transport.
type answerSlot struct {
	res *mcpsdk.CallToolResult // set by whoever read the answer, before done or errAnswered

	// done is closed when another goroutine read the call's answer while
	// the call waited for its turn at the pipe: res is set, or nil when
	// the answer went to the SDK to decode.
	done chan struct{}

	// The connection and the request id it is noted under, set and read
	// on the calling goroutine (the SDK writes a call on its caller's).
	conn *stdioConn
	id   jsonrpc.ID
}

type answerSlotKey struct{}

// errAnswered is the error that tells the SDK a call's answer was read
// into its slot; directAnswers takes it back. The SDK's jsonrpc2 keeps a
// connection whose Write fails with a rejection (its ErrRejected, code
// -32005, matched by Is) and retires the call with the error.
var errAnswered error = answeredError{}

type answeredError struct{}

func (answeredError) Error() string {
	return "mcp: the transport read the answer into its call's slot (never returned to a caller)"
}

// Is makes errAnswered a rejection to the SDK's jsonrpc2 (see errAnswered).
// The SDK asks it of its sentinel errors, which are *jsonrpc.Error, on
// every call.
func (answeredError) Is(target error) bool {
	werr, ok := target.(*jsonrpc.Error)
	return ok && werr != nil && werr.Code == codeRejected
}

// directAnswers is the client's sending middleware that gives each
// tools/call a slot the stdio transport can answer it through. It sits
// outside the SDK's own middleware, which sees errAnswered as an error and
// passes it up.
func directAnswers(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		slot := new(answerSlot)
		res, err := next(context.WithValue(ctx, answerSlotKey{}, slot), method, req)
		slot.release()
		if errors.Is(err, errAnswered) {
			// The error comes only once the answer was read: res was
			// set before, on the reading goroutine, which handed it
			// over (Write's return, or the SDK's retirement).
			return slot.res, nil
		}
		return res, err
	}
}

// release forgets the slot's request: a call given up before its answer
// came would else stay noted for the session's life.
func (s *answerSlot) release() {
	if s.conn != nil {
		s.conn.slotsMu.Lock()
		if s.conn.slots[s.id] == s {
			delete(s.conn.slots, s.id)
		}
		s.conn.slotsMu.Unlock()
	}
}

// slotTable is the part of a stdioConn that answers calls directly.
type slotTable struct {
	slotsMu sync.Mutex
	slots   map[jsonrpc.ID]*answerSlot // by request id, until answered
}

// note notes req's slot, if ctx carries one, and returns it; it must be
// called before req is written, as the answer may come before Write
// returns. A slot of a call that reads its own answer gets its done.
func (c *stdioConn) note(ctx context.Context, req *jsonrpc.Request) *answerSlot {
	slot, _ := ctx.Value(answerSlotKey{}).(*answerSlot)
	if slot == nil || !req.ID.IsValid() {
		return nil
	}
	slot.release() // a retry of the same call (the SDK's multi-round trip) has a new id
	slot.res = nil
	if c.rd != nil {
		slot.done = make(chan struct{})
	}
	c.slotsMu.Lock()
	if c.slots == nil {
		c.slots = make(map[jsonrpc.ID]*answerSlot)
	}
	c.slots[req.ID] = slot
	c.slotsMu.Unlock()
	slot.conn, slot.id = c, req.ID
	return slot
}

// settle takes msg, just read, to the call it answers, if that call has a
// slot: it returns the slot, with the result in it if it is of a shape
// decodeToolResult reads, and what the SDK is then to read of msg, if
// anything: msg itself when the SDK must decode it; an errAnswered answer
// when the call waits in the SDK's Await (it wrote its request the SDK's
// way); nothing when the call reads its own answer (its Write returns
// errAnswered).
func (c *stdioConn) settle(msg jsonrpc.Message) (forSDK jsonrpc.Message, slot *answerSlot) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return msg, nil
	}
	c.slotsMu.Lock()
	slot = c.slots[resp.ID]
	if slot != nil {
		delete(c.slots, resp.ID)
	}
	c.slotsMu.Unlock()
	if slot == nil {
		return msg, nil
	}
	if resp.Error == nil {
		slot.res, _ = decodeToolResult(resp.Result)
	}
	switch {
	case slot.res == nil:
		return msg, slot
	case slot.done != nil:
		return nil, slot
	}
	return &jsonrpc.Response{ID: resp.ID, Error: errAnswered}, slot
}

// decodeToolResult reads a tools/call result of the common shapes as the
// SDK would (CallToolResult.UnmarshalJSON): text content, isError,
// structured content, _meta, and the result type "complete" that servers
// of 2026-07-28 send; for any other it reports false. raw must be valid
// JSON.
func decodeToolResult(raw []byte) (*mcpsdk.CallToolResult, bool) {
	res := &mcpsdk.CallToolResult{}
	var seen [5]bool // by member, in the order of the cases below
	once := func(i int) bool {
		if seen[i] {
			return false // repeated: the decoder's rules apply
		}
		seen[i] = true
		return true
	}
	ok := mcpwire.Members(raw, func(key, val []byte) bool {
		switch string(key) {
		case "content":
			if !once(0) {
				return false
			}
			res.Content = make([]mcpsdk.Content, 0, 1)
			return mcpwire.Elements(val, func(item []byte) bool {
				text, ok := textContent(item)
				if ok {
					res.Content = append(res.Content, text)
				}
				return ok
			})
		case "isError":
			if !once(1) {
				return false
			}
			switch string(val) {
			case "true":
				res.IsError = true
			case "false":
			default:
				return false
			}
			return true
		case "structuredContent":
			if !once(2) {
				return false
			}
			var ok bool
			res.StructuredContent, ok = mcpwire.Value(val)
			return ok
		case "_meta":
			if !once(3) || val[0] != '{' {
				return false
			}
			m, ok := mcpwire.Value(val)
			res.Meta, _ = m.(map[string]any)
			return ok
		case "resultType":
			return once(4) && string(val) == `"complete"`
		}
		return false
	})
	if !ok {
		return nil, false
	}
	if seen[4] {
		// The result type is kept in a field only the SDK can set: a
		// result it decoded once lends it.
		typed := completeResult()
		typed.Meta, typed.Content, typed.StructuredContent, typed.IsError = res.Meta, res.Content, res.StructuredContent, res.IsError
		res = &typed
	}
	if res.Content == nil {
		res.Content = []mcpsdk.Content{} // as the SDK leaves a result without content
	}
	return res, true
}

// completeResult is an empty result of the type "complete", as the SDK
// decodes one.
var completeResult = sync.OnceValue(func() mcpsdk.CallToolResult {
	var r mcpsdk.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &r); err != nil {
		panic(err) // a constant the SDK reads
	}
	return r
})

// textContent reads a text content block that has no more than its type
// and text.
func textContent(item []byte) (*mcpsdk.TextContent, bool) {
	var typed, texted bool
	t := &mcpsdk.TextContent{}
	ok := mcpwire.Members(item, func(key, val []byte) bool {
		switch string(key) {
		case "type":
			if typed || string(val) != `"text"` {
				return false
			}
			typed = true
			return true
		case "text":
			if texted {
				return false
			}
			texted = true
			var ok bool
			t.Text, ok = mcpwire.String(val)
			return ok
		}
		return false
	})
	return t, ok && typed
}
