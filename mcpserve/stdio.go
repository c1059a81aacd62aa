package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// StdioTransport serves one client over newline-delimited JSON-RPC on a
// pair of streams: `freecode mcp serve --stdio` on its standard input and
// output. It is the go-sdk's mcp.StdioTransport with FreeCode's stdio
// encoding: a message of a common shape is decoded by one scan of its
// envelope (mcpwire.DecodeEnvelope) and an answer is written without a second
// encoding pass (mcpwire.AppendMessage), where the SDK's transport decodes
// every message three times more, each time into a fresh 32 KiB buffer
// (docs/upstream/go-sdk-json-decoder.md).
//
// What a client may send is what the SDK's transport accepts, and what it
// refuses ends the session as the SDK's does: a line that is not one JSON
// value, a message the SDK's jsonrpc.DecodeMessage refuses (any message
// the envelope scan does not read is decoded by it), one nested deeper than
// the SDK decodes, or one over MaxMessageBytes. Blank lines are skipped.
// Batches (a JSON array of messages) are served as the SDK serves them:
// the answers to a batch's calls go out as one array, and a batch is
// refused once the session negotiated 2025-06-18 or later, which dropped
// them.
//
// Each message is served under the revision it names, as the HTTP side
// routes each request (mcpwire.RevisionRouter): a 2026-07-28 client never
// sends initialize, and each of its calls names its revision in its
// _meta["io.modelcontextprotocol/protocolVersion"] instead. So a batch
// holding a call that names 2025-06-18 or later is refused too, whatever
// the session negotiated: each of its calls is answered with an Invalid
// Request error (as one array, the shape a batch is answered in), and the
// session goes on, as a stateless client has no session to lose. And once
// such a call was served on a session that never initialized, a call that
// names no revision (other than initialize or ping) is answered with the
// error the SDK gives a session that did not initialize, instead of being
// served under the revision of the calls before it.
//
// Where it parts from the SDK's transport (v1.8.0): a message is read
// when its line ends, as MCP's stdio transport frames messages, where the
// SDK's stream decoder reads one as soon as its last byte arrives, and
// also one spread over lines, which ends the session here. A batch that
// holds a notification gets the answers to its calls; the SDK's transport
// waits for an answer to the notification too, which never comes.
type StdioTransport struct {
	// In and Out are the client's streams; nil means os.Stdin and
	// os.Stdout. Closing the session closes In, not Out.
	In  io.ReadCloser
	Out io.Writer
	// MaxMessageBytes bounds one message from the client; 0 means the
	// SDK's default, mcpsdk.DefaultMaxLineLength (16 MiB).
	MaxMessageBytes int
}

// Connect implements mcpsdk.Transport. It starts the goroutine that reads
// In; the session's end stops it.
func (t *StdioTransport) Connect(context.Context) (mcpsdk.Connection, error) {
	in, out, max := t.In, t.Out, t.MaxMessageBytes
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	if max <= 0 {
		max = mcpsdk.DefaultMaxLineLength
	}
	c := &stdioConn{
		in:       in,
		out:      mcpwire.NewWriter(out),
		incoming: make(chan frame),
		closed:   make(chan struct{}),
	}
	c.reader = mcpwire.NewReader(c)
	go c.pump(mcpwire.NewLineReader(in, max), max)
	return c, nil
}

// maxDepth is how deep the SDK's decoder nests before it refuses a
// message (its internal/json's defaultMaxDepth).
const maxDepth = 1000

// batchesDroppedIn is the first protocol revision without JSON-RPC
// batches.
const batchesDroppedIn = "2025-06-18"

// frame is what one line held: a message, or a batch's messages; or why
// reading ended.
type frame struct {
	msg   jsonrpc.Message
	batch []jsonrpc.Message
	err   error
}

// stdioConn is the server's side of one stdio session. The SDK calls Read
// from one goroutine at a time and Write from any.
type stdioConn struct {
	in io.Closer

	// incoming carries pump's frames to Read. The pump reads In on a
	// goroutine of its own, as the SDK's transport does: os.Stdin is
	// rarely pollable, so closing it need not end a read in progress,
	// and a session's Close must not wait for the client's next line.
	incoming chan frame
	reader   *mcpwire.Reader // over the frames (Next); Read's own

	out *mcpwire.Writer

	// stateMu guards what Read and Write tell each other: the SDK tells
	// its own transport the negotiated version, a method no other
	// package's transport can have, so it is read off the initialize
	// answer going out.
	stateMu sync.Mutex
	initID  jsonrpc.ID            // the initialize call's id, until its answer
	version string                // the negotiated protocol version, once answered
	batches map[jsonrpc.ID]*batch // the open batches, by the ids of their calls

	// What Read alone knows of the messages read so far.
	initSeen  bool // an initialize call was read
	stateless bool // a call that names 2026-07-28 or later was read

	closeOnce sync.Once
	closed    chan struct{} // closed by Close
	closeErr  error
}

// batch collects the answers to the calls of one incoming batch.
type batch struct {
	unresolved map[jsonrpc.ID]int // call id → its answer's index
	answers    []jsonrpc.Message
}

// SessionID implements mcpsdk.Connection; stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// pump reads and decodes lines until an error (the end of In included)
// or the connection's close.
func (c *stdioConn) pump(lr *mcpwire.LineReader, max int) {
	for {
		var f frame
		line, err := nextLine(lr, max)
		if err != nil {
			f.err = err
		} else {
			f = decodeFrame(line)
		}
		select {
		case c.incoming <- f:
		case <-c.closed:
			return
		}
		if f.err != nil {
			return
		}
	}
}

// Read returns the next message. After Close it returns io.EOF. A message
// refused by its revision (see StdioTransport) is answered here and not
// returned.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return c.reader.Read(ctx)
}

// Next implements mcpwire.Source: the pump's next frame, less what its
// revision refuses, which is answered here.
func (c *stdioConn) Next(ctx context.Context) (jsonrpc.Message, []jsonrpc.Message, error) {
	var f frame
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case f = <-c.incoming:
	case <-c.closed:
		return nil, nil, io.EOF
	}
	if f.err != nil {
		return nil, nil, f.err
	}
	if f.batch == nil {
		if refusal := c.refuseUnnamed(f.msg); refusal != nil {
			return nil, nil, c.out.Write(refusal)
		}
		c.noteInitialize(f.msg)
		return f.msg, nil, nil
	}
	if refusals, why := c.refuseBatch(f.batch); why != "" {
		if len(refusals) > 0 {
			return nil, nil, c.out.WriteBatch(refusals)
		}
		return nil, nil, nil
	}
	if err := c.addBatch(f.batch); err != nil {
		return nil, nil, err
	}
	for _, msg := range f.batch {
		c.noteInitialize(msg)
	}
	return nil, f.batch, nil
}

// namedRevision is the revision a call names in its _meta (SEP-2575), or
// "" for a notification, an answer, or a call that names none. Only a
// call's params that mention the key are decoded.
func namedRevision(msg jsonrpc.Message) string {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || !bytes.Contains(req.Params, []byte(mcpsdk.MetaKeyProtocolVersion)) {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return "" // the SDK answers params that do not decode
	}
	var v string
	if json.Unmarshal(p.Meta[mcpsdk.MetaKeyProtocolVersion], &v) != nil {
		return ""
	}
	return v
}

// refuseUnnamed notes the revision msg names and returns the answer that
// refuses it, or nil to serve it: a call that names no revision, on a
// session that never initialized and already served a call of the
// stateless revisions, is not served under theirs.
func (c *stdioConn) refuseUnnamed(msg jsonrpc.Message) *jsonrpc.Response {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil
	}
	if v := namedRevision(msg); v >= mcpwire.StatelessSince {
		c.stateless = true
		return nil
	} else if v != "" {
		return nil
	}
	if !c.stateless || c.initSeen || req.Method == "initialize" || req.Method == "ping" {
		return nil
	}
	return &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
		Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("method %q is invalid during session initialization: a request without initialize names its protocol version in _meta[%q]",
			req.Method, mcpsdk.MetaKeyProtocolVersion),
	}}
}

// refuseBatch returns the answers that refuse the calls of a batch, and
// why, when the batch is not served: it holds a call that names a revision
// without batches, or, on a session that never initialized and served a
// call of the stateless revisions, a call refuseUnnamed would refuse. It
// returns "" to serve the batch by the session's revision (addBatch).
func (c *stdioConn) refuseBatch(msgs []jsonrpc.Message) (refusals []jsonrpc.Message, why string) {
	named := ""
	for _, msg := range msgs {
		if v := namedRevision(msg); v >= batchesDroppedIn {
			named = v
			break
		}
	}
	switch {
	case named != "":
		if named >= mcpwire.StatelessSince {
			c.stateless = true
		}
		why = fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchesDroppedIn, named)
	case c.stateless && !c.initSeen && !slices.ContainsFunc(msgs, isInitialize):
		for _, msg := range msgs {
			if r := c.refuseUnnamed(msg); r != nil {
				why = r.Error.(*jsonrpc.Error).Message
				break
			}
		}
	}
	if why == "" {
		return nil, ""
	}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			refusals = append(refusals, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: why}})
		}
	}
	return refusals, why
}

// isInitialize reports whether msg is an initialize call.
func isInitialize(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && req.IsCall() && req.Method == "initialize"
}

// noteInitialize remembers the id of the initialize call, whose answer
// tells the negotiated version.
func (c *stdioConn) noteInitialize(msg jsonrpc.Message) {
	if isInitialize(msg) {
		req := msg.(*jsonrpc.Request)
		c.initSeen = true
		c.stateMu.Lock()
		if c.version == "" {
			c.initID = req.ID
		}
		c.stateMu.Unlock()
	}
}

// addBatch records the calls of an incoming batch, whose answers Write
// then holds until the last, as the SDK's transport does.
func (c *stdioConn) addBatch(msgs []jsonrpc.Message) error {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.version >= batchesDroppedIn {
		return fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchesDroppedIn, c.version)
	}
	var b *batch
	for _, msg := range msgs {
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		if b == nil {
			b = &batch{unresolved: map[jsonrpc.ID]int{}}
		}
		if _, ok := b.unresolved[req.ID]; ok {
			return fmt.Errorf("duplicate message ID %v", req.ID.Raw())
		}
		if _, ok := c.batches[req.ID]; ok {
			return fmt.Errorf("invalid request: batch contains previously seen request %v", req.ID.Raw())
		}
		b.unresolved[req.ID] = len(b.answers)
		b.answers = append(b.answers, nil)
	}
	if b == nil {
		return nil
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.unresolved {
		c.batches[id] = b
	}
	return nil
}

// answered notes an answer going out: the negotiated version from the
// initialize result, and the answer's place in its batch. It reports
// whether the answer belongs to a batch, and the batch's answers if it was
// the last.
func (c *stdioConn) answered(resp *jsonrpc.Response) ([]jsonrpc.Message, bool) {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.initID.IsValid() && resp.ID == c.initID {
		c.initID = jsonrpc.ID{}
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if resp.Error == nil && json.Unmarshal(resp.Result, &res) == nil {
			c.version = res.ProtocolVersion
		}
	}
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.answers[b.unresolved[resp.ID]] = resp
	delete(b.unresolved, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.unresolved) > 0 {
		return nil, true
	}
	return b.answers, true
}

// Write sends msg as one line, in one write; an answer to a batch's call
// waits for the batch's other answers and goes out with them.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.out.Write(msg)
	}
	answers, inBatch := c.answered(resp)
	switch {
	case !inBatch:
		return c.out.Write(msg)
	case answers == nil:
		return nil // the batch's other calls are still running
	}
	return c.out.WriteBatch(answers)
}

// Close closes In, which ends a pending read of a closable stream, and
// makes Read return io.EOF at once either way.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.in.Close()
		close(c.closed)
	})
	return c.closeErr
}

// decodeFrame decodes one line: one message, or a batch's messages.
func decodeFrame(line []byte) frame {
	if !json.Valid(line) {
		var v json.RawMessage
		return frame{err: fmt.Errorf("reading a message from the client: %w", json.Unmarshal(line, &v))}
	}
	if mcpwire.NestsDeeper(line, maxDepth) {
		return frame{err: fmt.Errorf("reading a message from the client: it nests deeper than %d levels", maxDepth)}
	}
	if line[0] != '[' {
		msg, err := decodeMessage(line)
		return frame{msg: msg, err: err}
	}
	msgs, err := mcpwire.DecodeBatch(line, decodeMessage)
	return frame{batch: msgs, err: err}
}

// decodeMessage decodes one message of a line, which is valid JSON: by the
// envelope scan if it reads it, else by the SDK's own decoder, so that
// whatever the scan does not read meets the SDK's rules (case-sensitive
// keys among them).
func decodeMessage(raw []byte) (jsonrpc.Message, error) {
	if msg := mcpwire.DecodeEnvelope(raw); msg != nil {
		return msg, nil
	}
	return jsonrpc.DecodeMessage(raw)
}

// nextLine returns the next line of lr that is not blank, trimmed of
// spaces; it is valid until the next call. A line over max bytes is an
// error, as a frame over the SDK's MaxLineLength is.
func nextLine(lr *mcpwire.LineReader, max int) ([]byte, error) {
	for {
		line, err := lr.ReadLine()
		if errors.Is(err, mcpwire.ErrLineTooLong) {
			return nil, fmt.Errorf("a message from the client is over %d bytes", max)
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
