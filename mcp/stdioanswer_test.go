package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// toolResults are tools/call results: shapes decodeToolResult reads, and
// shapes it leaves to the SDK.
var toolResults = []string{
	`{"content":[{"type":"text","text":"Echo: hello"}]}`,
	`{"content":[]}`, `{}`, `{"isError":true,"content":[{"type":"text","text":""}]}`,
	`{"content":[{"text":"a\nb \"q\" é \u00e9 😀","type":"text"},{"type":"text","text":"two"}],"isError":false}`,
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"testserver","version":"1.2.3"}},"content":[{"type":"text","text":"hello"}],"resultType":"complete"}`,
	`{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1,"list":[1.5,"x",null,true,{}]}}`,
	`{"content":[],"structuredContent":null}`, `{"content":[],"structuredContent":[1,2]}`, `{"content":[],"structuredContent":"s"}`,
	` { "content" : [ { "type" : "text" , "text" : "spaced" } ] } `, `{"content":[{"type":"text"}]}`,
	// Left to the SDK:
	`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`,
	`{"content":[{"type":"text","text":"x","annotations":{"audience":["user"]}}]}`,
	`{"content":[{"type":"text","text":"x","_meta":{"a":1}}]}`,
	`{"content":[{"text":"no type"}]}`, `{"content":[{"type":"text","text":null}]}`,
	`{"content":null}`, `{"content":{"type":"text","text":"one"}}`, `{"isError":null}`, `{"_meta":null}`,
	`{"content":[],"content":[]}`, `{"Content":[]}`, `{"content":[{"type":"text","text":"a","text":"b"}]}`,
	`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}}}`,
	`{"content":[],"task":{"taskId":"t"}}`, `{"content":[],"unknown":1}`,
	"{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\"}]}", `{"content":[{"type":"text","text":"lone \ud800"}]}`,
	`{"content":[],"structuredContent":{"big":1e400}}`,
}

// TestDecodeToolResultMatchesSDK: a result decodeToolResult reads is the
// result the SDK makes of the same bytes, to the last unexported field.
func TestDecodeToolResultMatchesSDK(t *testing.T) {
	read := 0
	for _, raw := range toolResults {
		if checkToolResult(t, []byte(raw)) {
			read++
		}
	}
	if read != 12 {
		t.Errorf("decodeToolResult read %d results, want the first 12", read)
	}
}

func FuzzDecodeToolResult(f *testing.F) {
	for _, raw := range toolResults {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if json.Valid(raw) {
			checkToolResult(t, raw)
		}
	})
}

// checkToolResult checks decodeToolResult against the SDK's decoding and
// reports whether it read raw.
func checkToolResult(t *testing.T, raw []byte) bool {
	t.Helper()
	got, ok := decodeToolResult([]byte(strings.TrimSpace(string(raw))))
	if !ok {
		return false
	}
	want := new(mcpsdk.CallToolResult) // the SDK's UnmarshalJSON, which its Await reaches
	if err := json.Unmarshal(raw, want); err != nil {
		t.Fatalf("%s: read here, the SDK refuses it: %v", raw, err)
	}
	if !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		t.Errorf("%s:\n the SDK reads %s\n       here %s", raw, w, g)
	}
	return true
}

// The result type a 2026-07-28 server sends survives the SDK's encoding,
// as it does when the SDK decodes the result.
func TestDecodedResultKeepsItsType(t *testing.T) {
	raw := `{"content":[{"type":"text","text":"hello"}],"resultType":"complete"}`
	res, ok := decodeToolResult([]byte(raw))
	if !ok {
		t.Fatal("not read")
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"resultType":"complete"`) {
		t.Errorf("encoded %s: the result type is lost", out)
	}
}

// pipeServer is a stdio connection to a scripted server: the test reads
// the client's lines from lines and writes the server's with send. The
// SDK's reader is played by a goroutine that keeps what Read returns.
type pipeServer struct {
	c     *stdioConn
	lines *bufio.Reader
	out   *os.File

	readMu sync.Mutex
	read   []jsonrpc.Message
	readCh chan jsonrpc.Message
	ended  chan error
}

func newPipeServer(t *testing.T) *pipeServer {
	t.Helper()
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	f := mcpwire.NewFilter(stdoutR, 1<<20, nil, nil)
	s := &pipeServer{
		c:      newStdioConn(f, stdoutR, stdinW, nil),
		lines:  bufio.NewReader(stdinR),
		out:    stdoutW,
		readCh: make(chan jsonrpc.Message, 100),
		ended:  make(chan error, 1),
	}
	if s.c.rd == nil {
		t.Skip("this system's pipes take no read deadline: calls do not read their answers")
	}
	go func() {
		for {
			msg, err := s.c.Read(context.Background())
			if err != nil {
				s.ended <- err
				return
			}
			s.readCh <- msg
		}
	}()
	t.Cleanup(func() {
		s.c.Close()
		stdoutW.Close()
		stdinR.Close()
		select {
		case <-s.ended:
		case <-time.After(hangGuard):
			t.Error("the reader did not end after Close")
		}
	})
	return s
}

// request reads the client's next line.
func (s *pipeServer) request(t *testing.T) string {
	t.Helper()
	line, err := s.lines.ReadString('\n')
	if err != nil {
		t.Errorf("reading the client's request: %v", err)
	}
	return line
}

func (s *pipeServer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := s.out.WriteString(line + "\n"); err != nil {
		t.Error(err)
	}
}

// next returns the next message the SDK's reader got.
func (s *pipeServer) next(t *testing.T) jsonrpc.Message {
	t.Helper()
	select {
	case msg := <-s.readCh:
		return msg
	case <-time.After(hangGuard):
		t.Fatal("the SDK's reader got nothing")
		return nil
	}
}

// intID is the id the SDK gives its n-th request.
func intID(n int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		panic(err)
	}
	return id
}

// noted is how many slots the connection keeps.
func (s *pipeServer) noted() int {
	s.c.slotsMu.Lock()
	defer s.c.slotsMu.Unlock()
	return len(s.c.slots)
}

func toolCall(id int64) *jsonrpc.Request {
	return &jsonrpc.Request{ID: intID(id), Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{}}`)}
}

// call writes a tools/call with a slot, as the SDK does under directAnswers,
// and returns Write's error when it returns.
func (s *pipeServer) call(ctx context.Context, id int64) (*answerSlot, <-chan error) {
	slot := new(answerSlot)
	done := make(chan error, 1)
	go func() { done <- s.c.Write(context.WithValue(ctx, answerSlotKey{}, slot), toolCall(id)) }()
	return slot, done
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
		t.Fatal("the call's Write did not return")
		return nil
	}
}

// A call reads its own answer: its Write returns errAnswered (a rejection
// to the SDK's jsonrpc2, which keeps the connection) with the result in
// its slot, and what came before the answer reaches the SDK's reader.
func TestStdioCallReadsItsAnswer(t *testing.T) {
	s := newPipeServer(t)
	// Wait until the SDK's reader reads stdout, so the call must take
	// the turn from it.
	for deadline := time.Now().Add(hangGuard); !s.c.readerIn.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the SDK's reader never read")
		}
	}
	slot, done := s.call(t.Context(), 7)
	if got := s.request(t); !strings.Contains(got, `"id":7`) || !strings.Contains(got, `"tools/call"`) {
		t.Fatalf("request %s", got)
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
	s.send(t, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"seven"}]}}`)
	err := wait(t, done)
	if !errors.Is(err, errAnswered) || !errors.Is(err, &jsonrpc.Error{Code: codeRejected}) {
		t.Fatalf("Write: %v, want errAnswered, a rejection to the SDK", err)
	}
	if want := []mcpsdk.Content{&mcpsdk.TextContent{Text: "seven"}}; slot.res == nil || !reflect.DeepEqual(slot.res.Content, want) {
		t.Errorf("slot holds %+v", slot.res)
	}
	if req, ok := s.next(t).(*jsonrpc.Request); !ok || req.Method != "notifications/progress" {
		t.Errorf("the SDK's reader got %+v, want the progress notification", req)
	}
	// The SDK's reader has stdout again once the calls are over, and sees
	// what the server sends unasked.
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if req, ok := s.next(t).(*jsonrpc.Request); !ok || req.Method != "notifications/tools/list_changed" {
		t.Errorf("the SDK's reader got %+v, want the list change", req)
	}
	if n := s.noted(); n != 0 {
		t.Errorf("%d slots left noted", n)
	}
}

// A request of the server's during a call (an elicitation, a ping) reaches
// the SDK's reader while the call reads stdout, and the SDK's answer to it
// goes out while the call still waits for its own.
func TestStdioServerAsksDuringACall(t *testing.T) {
	s := newPipeServer(t)
	slot, done := s.call(t.Context(), 5)
	s.request(t)
	s.send(t, `{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}`)
	req, ok := s.next(t).(*jsonrpc.Request)
	if !ok || req.Method != "elicitation/create" {
		t.Fatalf("the SDK's reader got %+v, want the server's question", req)
	}
	answer := &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{"action":"accept","content":{}}`)}
	if err := s.c.Write(t.Context(), answer); err != nil {
		t.Fatal(err)
	}
	if got := s.request(t); !strings.Contains(got, `"q1"`) || !strings.Contains(got, `"accept"`) {
		t.Fatalf("the server got %s, want the answer to its question", got)
	}
	s.send(t, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"done"}]}}`)
	if err := wait(t, done); !errors.Is(err, errAnswered) || slot.res == nil {
		t.Fatalf("Write: %v, slot %+v", err, slot.res)
	}
}

// An answer of a shape only the SDK reads goes to the SDK's reader, and
// the call's Write returns nil so that the SDK waits for it.
func TestStdioCallLeavesOddAnswersToSDK(t *testing.T) {
	s := newPipeServer(t)
	slot, done := s.call(t.Context(), 3)
	s.request(t)
	answer := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}}`
	s.send(t, answer)
	if err := wait(t, done); err != nil {
		t.Fatalf("Write: %v, want nil", err)
	}
	if slot.res != nil {
		t.Errorf("slot holds %+v", slot.res)
	}
	resp, ok := s.next(t).(*jsonrpc.Response)
	if !ok || resp.ID != intID(3) || !strings.Contains(string(resp.Result), `"image"`) {
		t.Errorf("the SDK's reader got %+v, want the answer", resp)
	}
}

// Concurrent calls: whichever reads stdout hands each answer to its call,
// answers of no call (here, an error answer to call 2) and everything
// else to the SDK's reader.
func TestStdioConcurrentCallsAnswerEachOther(t *testing.T) {
	s := newPipeServer(t)
	const n = 5
	slots := make([]*answerSlot, n)
	dones := make([]<-chan error, n)
	for i := range n {
		slots[i], dones[i] = s.call(t.Context(), int64(i+1))
	}
	for range n {
		s.request(t)
	}
	for i := n; i >= 1; i-- {
		if i == 2 {
			s.send(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no"}}`)
			continue
		}
		s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d"}]}}`, i, i))
	}
	for i := range n {
		err := wait(t, dones[i])
		if i+1 == 2 {
			if err != nil {
				t.Errorf("call 2: %v, want nil: the SDK gets its error answer", err)
			}
			continue
		}
		if !errors.Is(err, errAnswered) {
			t.Errorf("call %d: %v", i+1, err)
			continue
		}
		if got := slots[i].res.Content[0].(*mcpsdk.TextContent).Text; got != fmt.Sprint(i+1) {
			t.Errorf("call %d got the answer %q", i+1, got)
		}
	}
	if resp, ok := s.next(t).(*jsonrpc.Response); !ok || resp.ID != intID(2) || resp.Error == nil {
		t.Errorf("the SDK's reader got %+v, want call 2's error", resp)
	}
}

// A call given up stops reading at once; its answer, coming later, goes
// to the SDK's reader, and no slot stays noted once the call is released.
func TestStdioCallGivenUp(t *testing.T) {
	s := newPipeServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	slot, done := s.call(ctx, 9)
	s.request(t)
	cancel()
	if err := wait(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write: %v, want the context's error", err)
	}
	slot.release() // directAnswers does, as the call returns
	s.send(t, `{"jsonrpc":"2.0","id":9,"result":{"content":[]}}`)
	if resp, ok := s.next(t).(*jsonrpc.Response); !ok || resp.ID != intID(9) {
		t.Errorf("the SDK's reader got %+v, want the late answer", resp)
	}
	if n := s.noted(); n != 0 {
		t.Errorf("%d slots left noted", n)
	}
}

// The server's end while a call reads: the call leaves the error to the
// SDK's reader, which ends the connection (and, in the SDK, the call).
func TestStdioCallSeesTheEnd(t *testing.T) {
	s := newPipeServer(t)
	_, done := s.call(t.Context(), 4)
	s.request(t)
	s.out.Close()
	if err := wait(t, done); err != nil {
		t.Fatalf("Write: %v, want nil", err)
	}
	select {
	case err := <-s.ended:
		if !errors.Is(err, io.EOF) {
			t.Errorf("the SDK's reader ended with %v, want EOF", err)
		}
		s.ended <- err // for the cleanup
	case <-time.After(hangGuard):
		t.Fatal("the SDK's reader did not end")
	}
}

// Many calls over a real server process at once, and a server that
// notifies as they run: each call gets its own answer, under the race
// detector.
func TestStdioConcurrentCallsOverAProcess(t *testing.T) {
	c := newTestConn(t, testSrv(t, "s"), nil)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 30 {
				text := fmt.Sprintf("g%d-%d", g, i)
				tool, args := "echo", map[string]any{"text": text}
				if i%5 == 0 {
					tool, args = "progress", map[string]any{"tag": text}
				}
				res, err := c.CallTool(t.Context(), tool, args, nil)
				if err != nil {
					t.Errorf("%s: %v", text, err)
					return
				}
				if got := res.Content[0].(*mcpsdk.TextContent).Text; got != text {
					t.Errorf("%s: got %q", text, got)
				}
			}
		})
	}
	wg.Wait()
}

// Calls that start while the SDK's reader reads stdout, against a server
// that answers at once: the reader often reads the call's answer before
// the call's interrupt reaches it, and the call must still get it, whether
// it waits for the turn or takes it right after the reader.
func TestStdioCallRacesTheReader(t *testing.T) {
	// The reader lingers after giving the turn back, so that a call
	// waiting for it takes it first. (Set before the reader starts, and
	// cleared after it ended: cleanups run last first.)
	testHookTurnBack = func() { time.Sleep(time.Millisecond) }
	t.Cleanup(func() { testHookTurnBack = nil })
	s := newPipeServer(t)
	go func() {
		for {
			line, err := s.lines.ReadString('\n')
			if err != nil {
				return
			}
			var req struct{ ID int64 }
			if json.Unmarshal([]byte(line), &req) != nil || req.ID == 0 {
				continue
			}
			s.out.WriteString(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%d"}]}}`+"\n", req.ID, req.ID))
		}
	}()
	for i := int64(1); i <= 150; i++ {
		// The reader takes stdout back once no call has been in
		// flight for turnGrace.
		for deadline := time.Now().Add(hangGuard); !s.c.readerIn.Load(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the SDK's reader never read")
			}
		}
		slot, done := s.call(t.Context(), i)
		if err := wait(t, done); !errors.Is(err, errAnswered) {
			t.Fatalf("call %d: %v", i, err)
		}
		if got := slot.res.Content[0].(*mcpsdk.TextContent).Text; got != fmt.Sprint(i) {
			t.Fatalf("call %d got %q", i, got)
		}
	}
}
