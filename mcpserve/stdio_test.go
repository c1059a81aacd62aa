package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcpwire"
)

// transportKind makes the server's end of a stdio session over in and out,
// with a cap on one incoming message.
type transportKind func(in io.ReadCloser, out io.Writer, max int) mcpsdk.Transport

func ours(in io.ReadCloser, out io.Writer, max int) mcpsdk.Transport {
	return &StdioTransport{In: in, Out: out, MaxMessageBytes: max}
}

func sdks(in io.ReadCloser, out io.Writer, max int) mcpsdk.Transport {
	return &mcpsdk.IOTransport{Reader: in, Writer: nopWriteCloser{out}, MaxLineLength: max}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Lines a client sends.
const (
	initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	ping        = `{"jsonrpc":"2.0","id":%d,"method":"ping"}` + "\n"
	echoCall    = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}` + "\n"
)

// nested is a ping whose params nest depth levels deep in all.
func nested(depth int) string {
	n := depth - 2 // the envelope and params are two levels
	return `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + "}}\n"
}

// step is what a client sends at once, and how many lines the server
// answers it with.
type step struct {
	lines   string
	answers int
}

// TestStdioMatchesSDK feeds the same lines to a server on StdioTransport
// and on the go-sdk's own newline transport (what mcp.StdioTransport is
// over os.Stdin and os.Stdout), and checks that both answer the same and
// end the session alike.
func TestStdioMatchesSDK(t *testing.T) {
	const capBytes = 4096
	init := func(version string) step { return step{fmt.Sprintf(initialize, version) + initialized, 1} }
	tests := []struct {
		name    string
		steps   []step
		wantErr bool // the session ends with an error
		max     int  // the size cap; 0 means capBytes
	}{
		{"a session", []step{init("2025-11-25"), {"\n" + fmt.Sprintf(ping, 2) + "  \r\n" + fmt.Sprintf(echoCall, 3, "hé \u2028 <&>"), 2}}, false, 0},
		{"not JSON", []step{{"hello\n", 0}}, true, 0},
		{"trailing data", []step{{`{"jsonrpc":"2.0","id":1,"method":"ping"} {}` + "\n", 0}}, true, 0},
		{"a key in another case", []step{{`{"JSONRPC":"2.0","id":1,"method":"ping"}` + "\n", 0}}, true, 0},
		{"another version", []step{{`{"jsonrpc":"1.0","id":1,"method":"ping"}` + "\n", 0}}, true, 0},
		{"an answer without an id", []step{{`{"jsonrpc":"2.0","result":{}}` + "\n", 0}}, true, 0},
		{"a scalar", []step{{"42\n", 0}}, true, 0},
		{"escapes and odd ids", []step{{`{"jsonrpc":"2.0","id":"\u0061b","method":"p\u0069ng"}` + "\n" + `{"jsonrpc":"2.0","id":7.0,"method":"ping"}` + "\n", 2}}, false, 0},
		{"nested to the limit", []step{{nested(1000), 1}}, false, 0},
		{"nested too deep", []step{{nested(1001), 0}}, true, 0},
		{"at the size cap", []step{{fmt.Sprintf(echoCall, 2, strings.Repeat("x", capBytes-100)), 1}}, false, 0},
		{"over the size cap", []step{{fmt.Sprintf(echoCall, 2, strings.Repeat("x", capBytes+100)), 0}}, true, 0},
		{"longer than the read buffer", []step{{fmt.Sprintf(echoCall, 2, strings.Repeat("y", 3*mcpwire.LineBufSize)) + fmt.Sprintf(ping, 3), 2}}, false, 4 * mcpwire.LineBufSize},
		{"over the cap, longer than the read buffer", []step{{fmt.Sprintf(echoCall, 2, strings.Repeat("y", 3*mcpwire.LineBufSize)), 0}}, true, 2 * mcpwire.LineBufSize},
		{"an empty batch", []step{{"[]\n", 0}}, true, 0},
		{"a batch in 2025-03-26", []step{init("2025-03-26"),
			{`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]` + "\n" + fmt.Sprintf(ping, 4), 2}}, false, 0},
		{"a batch that repeats an id", []step{init("2025-03-26"), {`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n", 0}}, true, 0},
		{"a batch in 2025-06-18", []step{init("2025-06-18"), {`[{"jsonrpc":"2.0","id":2,"method":"ping"}]` + "\n", 0}}, true, 0},
		{"a batch with an invalid message", []step{{`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0"}]` + "\n", 0}}, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = capBytes
			}
			want, wantErr := serveLines(t, sdks, max, tc.steps)
			got, err := serveLines(t, ours, max, tc.steps)
			if (err != nil) != tc.wantErr || (wantErr != nil) != tc.wantErr {
				t.Errorf("session end: ours %v, SDK's %v; want an error: %v", err, wantErr, tc.wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answers (-SDK +ours):\n%s", diff)
			}
		})
	}
}

// TestStdioDiffersFromSDK: where StdioTransport and the SDK's transport
// part, on purpose.
func TestStdioDiffersFromSDK(t *testing.T) {
	// A message spread over lines, which MCP's stdio transport forbids
	// and the SDK's stream decoder reads, ends the session.
	if _, err := serveLines(t, ours, 0, []step{{"{\n" + `"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", 0}}); err == nil {
		t.Error("a message over two lines was read")
	}
	// A batch that holds a notification gets the answers to its calls.
	// The SDK's transport (v1.8.0) counts the notification as a call
	// with no id, which is never answered, so the batch's answer never
	// goes out.
	got, err := serveLines(t, ours, 0, []step{
		{fmt.Sprintf(initialize, "2025-03-26") + initialized, 1},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]` + "\n", 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"jsonrpc": "2.0", "id": 2.0, "result": map[string]any{}}}
	if diff := cmp.Diff(want, got[1]); diff != "" {
		t.Errorf("the batch's answer (-want +got):\n%s", diff)
	}
}

// serveLines serves one session of a bare server on kind and takes it
// through steps: it writes each step's lines and reads its answers. Then
// it closes the server's input, unless the session ended by itself. It
// returns the answers, decoded (each step's ordered by id), and how the
// session ended.
func serveLines(t *testing.T, kind transportKind, max int, steps []step) ([]any, error) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "bare", Version: "1"}, nil)
	srv.AddTool(&mcpsdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		return text(args(req)["text"].(string)), nil
	})
	ended := make(chan error, 1)
	go func() {
		ended <- srv.Run(t.Context(), kind(inR, outW, max))
		outW.Close()
	}()
	answers := make(chan []byte)
	go func() {
		defer close(answers)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			answers <- slices.Clone(sc.Bytes())
		}
	}()
	var got []any
	for _, st := range steps {
		// A session that refuses a line may close its input before the
		// rest is written: how it ended is checked below.
		_, _ = io.WriteString(inW, st.lines)
		var these []any
		for range st.answers {
			line, ok := waitForOK(t, answers, "an answer")
			if !ok {
				t.Fatalf("the session ended after %d answers, want %d", len(got)+len(these), len(got)+st.answers)
			}
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("answer %q: %v", line, err)
			}
			these = append(these, v)
		}
		slices.SortFunc(these, func(a, b any) int { return strings.Compare(answerID(a), answerID(b)) })
		got = append(got, these...)
	}
	var end error
	select {
	case end = <-ended:
	default:
		inW.Close()
		end = waitFor(t, ended, "the session's end")
	}
	if line, ok := <-answers; ok {
		t.Errorf("an answer more: %s", line)
	}
	return got, end
}

// answerID is the id of an answer, or of a batch's first answer.
func answerID(v any) string {
	if batch, ok := v.([]any); ok && len(batch) > 0 {
		v = batch[0]
	}
	m, _ := v.(map[string]any)
	return fmt.Sprint(m["id"])
}

// waitForOK receives from ch within the hang guard; ok is false once ch
// is closed.
func waitForOK[T any](t testing.TB, ch <-chan T, what string) (v T, ok bool) {
	t.Helper()
	select {
	case v, ok = <-ch:
		return v, ok
	case <-time.After(hangGuard):
	}
	t.Fatalf("no %s within %v", what, hangGuard)
	return v, false
}

// blockingReader blocks every read until released, and its Close does not
// release it: os.Stdin when it is not pollable.
type blockingReader struct{ release chan struct{} }

func (r blockingReader) Read([]byte) (int, error) {
	<-r.release
	return 0, io.EOF
}

func (blockingReader) Close() error { return nil }

// TestStdioCloseWithReadPending: a session ends at once when the server
// stops, even though closing its input does not end the read in progress;
// that read's goroutine ends with the read.
func TestStdioCloseWithReadPending(t *testing.T) {
	in := blockingReader{release: make(chan struct{})}
	defer close(in.release) // goleak checks that the reader goes
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "bare", Version: "1"}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	ended := make(chan error, 1)
	go func() { ended <- srv.Run(ctx, &StdioTransport{In: in, Out: io.Discard}) }()
	cancel()
	if err := waitFor(t, ended, "the session's end"); err != context.Canceled {
		t.Errorf("Run: %v, want context.Canceled", err)
	}
}

// decodeSeeds are lines of many shapes, common and odd.
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"}]\"{["}]}}`,
	` { "result" : [ 1 , {"a":"b"} ] , "id" : -42 , "jsonrpc" : "2.0" } `,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	`{"jsonrpc":"2.0","method":"","id":2}`,
	`{"jsonrpc":"2.0","id":123456789012345,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`,
	`{"jsonrpc":"2.0","id":1,"Method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\x84\"}",
	`{"jsonrpc":"2\u002e0","id":1,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
	`{"id":1,"method":"m"}`,
	`[]`,
}

// FuzzStdioDecode: on any JSON line, the server decodes the message the
// SDK's own decoder gives, or fails where it fails.
func FuzzStdioDecode(f *testing.F) {
	for _, line := range decodeSeeds {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return // refused before decoding
		}
		want, wantErr := jsonrpc.DecodeMessage(line)
		got, err := decodeMessage(line)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: error %v, the SDK's %v", line, err, wantErr)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b })); diff != "" {
			t.Errorf("%s (-SDK +ours):\n%s", line, diff)
		}
	})
}

// TestStdioPerMessageRevision: a 2026-07-28 client never initializes;
// each of its calls names the revision in _meta, and the transport serves
// each message by the revision it names, as the HTTP side routes each
// request: no batch of such calls is served, even as the first line of a
// session, and a call that names no revision is not served under the
// revision of the calls before it. The session goes on after each refusal.
func TestStdioPerMessageRevision(t *testing.T) {
	call := func(id int, method, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, id, method, params)
	}
	list := func(id int) string { return call(id, "tools/list", meta2026) }
	echo := func(id int, text string) string {
		return call(id, "tools/call", fmt.Sprintf(`"name":"echo","arguments":{"text":%q},%s`, text, meta2026))
	}
	batchRefused := "JSON-RPC batching is not supported in 2025-06-18 and later (request version: 2026-07-28)"
	refusal := func(id float64, msg string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32600.0, "message": msg}}
	}
	got, err := serveLines(t, ours, 0, []step{
		{"[" + list(1) + "," + echo(2, "batched") + "]\n", 1},
		{echo(3, "single") + "\n", 1},
		{call(4, "tools/list", "") + "\n", 1},
		{"[" + call(5, "tools/list", "") + "]\n", 1},
		{echo(6, "still served") + "\n", 1},
	})
	if err != nil {
		t.Fatalf("the session ended with %v, want it served to its end", err)
	}
	if len(got) != 5 {
		t.Fatalf("%d answers, want 5: %v", len(got), got)
	}
	unnamed := func(id float64) map[string]any {
		return refusal(id, `method "tools/list" is invalid during session initialization: a request without initialize names its protocol version in _meta["io.modelcontextprotocol/protocolVersion"]`)
	}
	want := []any{
		[]any{refusal(1, batchRefused), refusal(2, batchRefused)},
		nil, // the echo's result, checked below
		unnamed(4),
		[]any{unnamed(5)},
		nil,
	}
	for i, w := range want {
		if w == nil {
			continue
		}
		if diff := cmp.Diff(w, got[i]); diff != "" {
			t.Errorf("answer %d (-want +got):\n%s", i+1, diff)
		}
	}
	for i, text := range map[int]string{1: "single", 4: "still served"} {
		b, _ := json.Marshal(got[i])
		if !strings.Contains(string(b), `"text":"`+text+`"`) || strings.Contains(string(b), `"error"`) {
			t.Errorf("answer %d: %s, want the echo of %q", i+1, b, text)
		}
	}

	// A session that initialized at 2025-03-26, which had batches, serves
	// a batch of its own calls, but not one whose call names 2026-07-28.
	got, err = serveLines(t, ours, 0, []step{
		{fmt.Sprintf(initialize, "2025-03-26") + initialized, 1},
		{"[" + fmt.Sprintf(strings.TrimSpace(ping), 2) + "," + fmt.Sprintf(strings.TrimSpace(ping), 3) + "]\n", 1},
		{"[" + list(4) + "]\n", 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]any{}
	if diff := cmp.Diff([]any{
		[]any{map[string]any{"jsonrpc": "2.0", "id": 2.0, "result": ok}, map[string]any{"jsonrpc": "2.0", "id": 3.0, "result": ok}},
		[]any{refusal(4, batchRefused)},
	}, got[1:]); diff != "" {
		t.Errorf("batches after a 2025-03-26 initialize (-want +got):\n%s", diff)
	}
}
