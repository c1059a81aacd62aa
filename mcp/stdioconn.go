package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/hoptrace"
	"github.com/freecode/freecode/internal/mcpwire"
	"github.com/freecode/freecode/mcp/tasks"
)

// stdioTransport is the go-sdk Transport over a local server's pipes, with
// stdout read through a mcpwire.Filter.
//
// It is faster than the SDK's mcp.IOTransport, which decodes each line twice before the SDK decodes it a third
// time (a json.Decoder pass in a goroutine of its own, then an attempt to
// read the line as a batch array, each with a 32 KiB buffer) and hands the
// message over a channel to the SDK's reader goroutine. Here the SDK's
// reader goroutine reads the next filtered line itself and decodes it once
// with the SDK's own decoder: one goroutine hop and two decodes fewer per
// message, same wire format, same batch support. A tools/call goes further:
// its goroutine reads its own answer, and its result is not decoded by
// the SDK (stdioanswer.go, stdioturn.go).
type stdioTransport struct {
	filter *mcpwire.Filter
	stdout deadliner // the pipe the filter reads, if its reads take a deadline
	stdin  io.WriteCloser
	logger *slog.Logger
}

// Connect implements mcpsdk.Transport.
func (t *stdioTransport) Connect(context.Context) (mcpsdk.Connection, error) {
	return newStdioConn(t.filter, t.stdout, t.stdin, t.logger), nil
}

// stdioConn is the newline-delimited JSON-RPC connection. Read is called
// by one goroutine at a time (the SDK's reader); Write may be concurrent.
// The filter is read by whoever holds the turn (stdioturn.go).
type stdioConn struct {
	filter *mcpwire.Filter
	reader *mcpwire.Reader // over the filter's lines (Next)
	logger *slog.Logger

	stdin io.WriteCloser
	out   *mcpwire.Writer // over stdin

	// older is set once an initialize went out: the session is of a
	// revision before 2026-07-28, whose tools may require the 2025-11-25
	// tasks that legacy keeps (mcp/tasks/legacy.go).
	older  atomic.Bool
	legacy tasks.LegacyTools

	slotTable // calls answered through their slots (stdioanswer.go)
	turns     // who reads stdout (stdioturn.go)

	closeOnce sync.Once
	closeErr  error
}

func newStdioConn(filter *mcpwire.Filter, stdout deadliner, stdin io.WriteCloser, logger *slog.Logger) *stdioConn {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &stdioConn{filter: filter, stdin: stdin, out: mcpwire.NewWriter(stdin), logger: logger}
	c.reader = mcpwire.NewReader(c)
	c.initTurns(stdout)
	return c
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
	return c.reader.Read(ctx)
}

// Next implements mcpwire.Source for the SDK's reader: what calls read for
// it first, else the filter's next line when the reader has the turn.
func (c *stdioConn) Next(context.Context) (jsonrpc.Message, []jsonrpc.Message, error) {
	for {
		if q, ok := c.dequeue(); ok {
			return q.msg, nil, q.err
		}
		if !c.readerTurn() {
			c.waitTurn()
			continue
		}
		msg, batch, err := c.readLine()
		// What the line answers is settled before the turn is given
		// back: a call that takes the turn next finds its answer in its
		// slot, or reads it itself, never neither.
		if msg != nil {
			msg = c.settleForSDK(msg)
		}
		kept := batch[:0]
		for _, m := range batch {
			if m = c.settleForSDK(m); m != nil {
				kept = append(kept, m)
			}
		}
		c.readerDone()
		if testHookTurnBack != nil {
			testHookTurnBack()
		}
		switch {
		case mcpwire.Interrupted(err):
			continue // a call takes the turn
		case err != nil:
			return nil, nil, err
		case msg != nil:
			return msg, nil, nil
		case len(kept) > 0:
			return nil, kept, nil
		}
		// Noise, or answers of calls that were waiting for the turn.
	}
}

// testHookTurnBack, if set, runs each time the SDK's reader gave the turn
// back.
var testHookTurnBack func()

// settleForSDK settles msg, read by the SDK's reader, and returns what the
// SDK is to read of it; a call waiting for its turn to read its own answer
// is told it came.
func (c *stdioConn) settleForSDK(msg jsonrpc.Message) jsonrpc.Message {
	forSDK, slot := c.settle(msg)
	if slot != nil && slot.done != nil {
		close(slot.done)
	}
	return forSDK
}

// readLine reads the filter's next line: a message, or a batch's, or
// nothing for noise. It is called with the turn held.
func (c *stdioConn) readLine() (jsonrpc.Message, []jsonrpc.Message, error) {
	line, err := c.filter.Next()
	if err != nil {
		return nil, nil, err
	}
	hoptrace.Mark(hoptrace.FromAnswer)
	hoptrace.Stage(hoptrace.FromSent, "9 the server's round trip: line written → line read")
	if bytes.TrimLeft(line, " \t\r\n")[0] != '[' { // a JSON value: not all space
		return c.decodeOne(line), nil, nil
	}
	batch, err := mcpwire.DecodeBatch(line, func(raw []byte) (jsonrpc.Message, error) { return c.decodeOne(raw), nil })
	if err != nil {
		c.filter.Skip(line, "an array, not a batch of messages")
	}
	return nil, batch, nil
}

// decodeOne decodes one message; an invalid answer becomes an error
// answer for its id, anything else invalid is noise (nil). A task answer
// is folded for the go-sdk to keep (tasks.Fold).
func (c *stdioConn) decodeOne(raw []byte) jsonrpc.Message {
	msg, err := mcpwire.Decode(raw)
	if err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Result != nil {
			c.legacy.Note(r.Result)
			r.Result, _ = tasks.Fold(r.Result)
		}
		return msg
	}
	if id, ok := answerID(raw); ok {
		why := fmt.Sprintf("the server's answer is not a valid JSON-RPC response: %v", err)
		c.logger.Warn("invalid answer on server stdout", "why", err)
		return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: mcpwire.CodeDropped, Message: why}}
	}
	c.filter.Skip(raw, err.Error())
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

// Write sends msg as one line, in one write. A tools/call with a slot
// (stdioanswer.go) then reads its own answer, when stdout takes read
// deadlines (stdioturn.go).
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var slot *answerSlot
	if req, ok := msg.(*jsonrpc.Request); ok {
		switch req.Method {
		case "initialize":
			c.older.Store(true)
		case "tools/call":
			slot = c.note(ctx, req)
			if !c.older.Load() {
				break
			}
			if params, ok := c.legacy.AskForTask(req.Params); ok {
				asked := *req // the go-sdk's request is left as it is
				asked.Params = params
				msg = &asked
			}
		}
	}
	if slot == nil || slot.done == nil {
		return c.out.Write(msg)
	}
	c.callers.Add(1)
	defer func() {
		c.lastEnd.Store(sinceEpoch())
		c.callers.Add(-1)
	}()
	if err := c.out.Write(msg); err != nil {
		return err
	}
	return c.readAnswer(ctx, slot)
}

// Close closes both pipes: the server sees EOF on stdin, and a pending
// read returns.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.closeErr = errors.Join(c.stdin.Close(), c.filter.Close())
		c.wake()
	})
	return c.closeErr
}
