package mcpwire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// lineRecorder keeps every write.
type lineRecorder struct{ writes [][]byte }

func (r *lineRecorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}
func (r *lineRecorder) Close() error { return nil }

// TestWriterMatchesSDK: every message goes out as one write of one line
// that means what the SDK's own encoding means.
func TestWriterMatchesSDK(t *testing.T) {
	call := func(id jsonrpc.ID, method, params string) *jsonrpc.Request {
		return &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(params)}
	}
	msgs := []jsonrpc.Message{
		call(mustID(float64(3)), "tools/call", `{"name":"echo","arguments":{"text":"hi <&> \u2028"}}`),
		call(mustID(float64(0)), "ping", ``),
		call(mustID(float64(-9)), "x", `[1,2]`),
		call(mustID(`a"b\c`+"\x01é"), "tools/list", `{}`),
		call(mustID("plain"), "méthode \"quoted\"\n", `{"a":null}`),
		call(jsonrpc.ID{}, "notifications/initialized", ``),
		call(jsonrpc.ID{}, "notifications/cancelled", `{"requestId":4,"reason":"ctx"}`),
		call(mustID(float64(5)), "indented", "{\n  \"a\": 1\r\n}"),
		call(mustID(float64(6)), "scalar params", `"s"`),
		&jsonrpc.Response{ID: mustID(float64(1)), Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: mustID(`q"uote` + "\x7f"), Result: json.RawMessage(`{"content":[{"type":"text","text":"a\nb <&>"}]}`)},
		&jsonrpc.Response{ID: mustID(float64(-2)), Result: json.RawMessage(`[]`)},
		&jsonrpc.Response{ID: mustID(float64(4)), Result: json.RawMessage("{\n  \"indented\": true\r\n}")},
		&jsonrpc.Response{ID: mustID("r"), Error: &jsonrpc.Error{Code: -32601, Message: "no"}},
	}
	for _, msg := range msgs {
		rec := &lineRecorder{}
		if err := NewWriter(rec).Write(msg); err != nil {
			t.Fatalf("%+v: %v", msg, err)
		}
		if len(rec.writes) != 1 {
			t.Fatalf("%+v: %d writes, want 1", msg, len(rec.writes))
		}
		line := rec.writes[0]
		if i := bytes.IndexAny(line, "\r\n"); i != len(line)-1 || line[i] != '\n' {
			t.Fatalf("%q: not one line ending in \\n", line)
		}
		want, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		var wantV, gotV any
		if err := json.Unmarshal(want, &wantV); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(line, &gotV); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if diff := cmp.Diff(wantV, gotV); diff != "" {
			t.Errorf("%s (-sdk +ours):\n%s", want, diff)
		}
		// And it reads back as the same message.
		back, err := Decode(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		sdkBack, _ := jsonrpc.DecodeMessage(want)
		if diff := cmp.Diff(sdkBack, back, cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b }), cmp.Comparer(func(a, b json.RawMessage) bool {
			if len(a) == 0 || len(b) == 0 {
				return len(a) == len(b)
			}
			var x, y any
			return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && cmp.Equal(x, y)
		})); diff != "" {
			t.Errorf("%q read back (-sdk +ours):\n%s", line, diff)
		}
	}
}

// TestWriterInvalidParams: params that are not JSON fail locally, as the
// SDK's encoder fails them, instead of reaching the server.
func TestWriterInvalidParams(t *testing.T) {
	rec := &lineRecorder{}
	err := NewWriter(rec).Write(&jsonrpc.Request{ID: mustID(float64(1)), Method: "m", Params: json.RawMessage("{\"a\":\n")})
	if err == nil || len(rec.writes) != 0 {
		t.Fatalf("err %v, %d writes; want an error and no write", err, len(rec.writes))
	}
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}

// envelopeLines are JSON lines of many shapes, common and odd.
var envelopeLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}` + "\n",
	`{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"}]\"{["}]}}`,
	` { "result" : [ 1 , {"a":"b"} ] , "id" : -42 , "jsonrpc" : "2.0" } ` + "\r\n",
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","method":"","id":2}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":123456789012345,"result":{}}`,
	`{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e3,"result":{}}`,
	`{"jsonrpc":"2.0","id":-0,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":"m"}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m\u00e9","params":[]}`,
	`{"jsonrpc":"2.0","id":1,"method":"mé","params":[]}`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\x84\"}", // bad UTF-8: encoding/json makes it U+FFFD
	`{"jsonrpc":"2\u002e0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":"scalar"}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"result":{"again":true}}`,
	`{"jsonrpc":"2.0","ID":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"extra":{"nested":["}"]},"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"id":1,"result":{}}`,
	`{}`,
	`[]`,
	`"2.0"`,
}

// TestDecodeMessageFastPath: the envelope scan and encoding/json agree on
// every shape, and the common shapes take the scan.
func TestDecodeMessageFastPath(t *testing.T) {
	for _, line := range envelopeLines {
		checkDecodeAgrees(t, []byte(line))
	}
	for _, line := range envelopeLines[:3] {
		if DecodeEnvelope([]byte(line)) == nil {
			t.Errorf("%s: not read by the envelope scan", line)
		}
	}
	// The message does not alias the line: a Filter reuses its buffer.
	line := []byte(envelopeLines[0])
	msg := DecodeEnvelope(line)
	clear(line)
	if got := string(msg.(*jsonrpc.Request).Params); got != `{"name":"echo"}` {
		t.Errorf("params after the line was reused: %q", got)
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, line := range envelopeLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return // a Filter passes only JSON
		}
		checkDecodeAgrees(t, line)
	})
}

func checkDecodeAgrees(t *testing.T, line []byte) {
	t.Helper()
	want, wantErr := decodeStd(line)
	got, err := Decode(line)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", line, err, wantErr)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b })); diff != "" {
		t.Errorf("%s (-encoding/json +ours):\n%s", line, diff)
	}
}
