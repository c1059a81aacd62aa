package mcpwire

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/freecode/freecode/internal/urlpolicy"
)

// nopCloser makes a strings.Reader an io.ReadCloser.
type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

func TestLineFilter(t *testing.T) {
	big := func(n int) string { return `{"s":"` + strings.Repeat("y", n-8) + `"}` }
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"messages pass", "{\"a\":1}\n[1,2]\n", 1 << 20, "{\"a\":1}\n[1,2]\n"},
		{"banner and logs skipped", "Server v1 starting\n{\"a\":1}\nlog: hello\n\n  \n{\"b\":2}\n", 1 << 20, "{\"a\":1}\n{\"b\":2}\n"},
		{"braces but not JSON", "{not json}\n{\"a\":1}\n", 1 << 20, "{\"a\":1}\n"},
		{"crlf kept", "{\"a\":1}\r\n", 1 << 20, "{\"a\":1}\r\n"},
		{"last line without newline", "{\"a\":1}\n{\"b\":2}", 1 << 20, "{\"a\":1}\n{\"b\":2}\n"},
		{"long line under the cap", big(200_000) + "\n{\"a\":1}\n", 1 << 20, big(200_000) + "\n{\"a\":1}\n"},
		{"long line over the cap dropped", big(300_000) + "\n{\"a\":1}\n", 150_000, "{\"a\":1}\n"},
		{"short line over the cap dropped", big(100) + "\n{\"a\":1}\n", 50, "{\"a\":1}\n"},
		{"the newline counts toward the cap", "{\"a\":1}\n{\"b\":22}\n", 8, "{\"a\":1}\n"},
		{"oversized last line", "{\"a\":1}\n" + big(300_000), 150_000, "{\"a\":1}\n"},
		{"oversized answer becomes an error answer",
			`{"jsonrpc":"2.0","id":7,"result":` + big(300_000) + "}\n" + "{\"a\":1}\n", 150_000,
			`{"error":{"code":-32603,"message":"dropped the server's answer: 300035 bytes, over maxMessageBytes (150000)"},"id":7,"jsonrpc":"2.0"}` + "\n{\"a\":1}\n"},
		{"oversized notification is only dropped",
			`{"jsonrpc":"2.0","method":"notifications/message","params":` + big(300_000) + "}\n" + "{\"a\":1}\n", 150_000, "{\"a\":1}\n"},
		{"too deep answer becomes an error answer",
			`{"jsonrpc":"2.0","id":"x","result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "}\n", 1 << 20,
			`{"error":{"code":-32603,"message":"dropped the server's answer: nested deeper than the 10000 levels a JSON decoder here reads"},"id":"x","jsonrpc":"2.0"}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFilter(nopCloser{strings.NewReader(tc.in)}, tc.max, slog.New(slog.DiscardHandler), nil)
			got, err := readLines(f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLineFilterNoiseExcerpt: a skipped line is logged at debug level, cut
// short, and masked before the cut, so a secret across it shows no part.
func TestLineFilterNoiseExcerpt(t *testing.T) {
	const secret = "SECRET-abcdefghijklmnopqrstuvwxyz"
	in := strings.Repeat("x", 190) + secret + strings.Repeat("y", 5000) + "\n"
	var logs strings.Builder
	f := NewFilter(nopCloser{strings.NewReader(in)}, 1<<20,
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		&FilterOptions{Redact: urlpolicy.NewRedactor(secret).String})
	if _, err := readLines(f); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, strings.Repeat("x", 190)+"***") ||
		strings.Contains(out, "SECRET") || strings.Contains(out, strings.Repeat("y", 20)) {
		t.Errorf("skipped line logged as %q; want at debug level, masked, cut short", out)
	}
}

// readLines returns every line f hands on, joined, until EOF.
func readLines(f *Filter) (string, error) {
	var b strings.Builder
	for {
		line, err := f.Next()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
		b.Write(line)
	}
}

func TestLineFilterSeesProgress(t *testing.T) {
	in := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	var seen []string
	f := NewFilter(nopCloser{strings.NewReader(in)}, 1<<20, slog.New(slog.DiscardHandler),
		&FilterOptions{OnProgress: func(line []byte) { seen = append(seen, string(line)) }})
	if _, err := readLines(f); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{strings.Split(in, "\n")[0]}, seen); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
}

func TestDecodeMessageMatchesSDK(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":"abc","result":{"content":[]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","method":"","id":2}`,
	}
	for _, line := range lines {
		want, wantErr := jsonrpc.DecodeMessage([]byte(line))
		got, err := Decode([]byte(line))
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: error %v, SDK's %v", line, err, wantErr)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b })); diff != "" {
			t.Errorf("%s (-sdk +ours):\n%s", line, diff)
		}
	}
	for _, bad := range []string{`{"jsonrpc":"1.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// cutReader hands out at most n bytes a read, each read after one that
// failed as a read deadline does.
type cutReader struct {
	r   io.Reader
	n   int
	cut bool
}

func (c *cutReader) Read(p []byte) (int, error) {
	if c.cut = !c.cut; !c.cut {
		return 0, os.ErrDeadlineExceeded
	}
	return c.r.Read(p[:min(len(p), c.n)])
}

// TestLineFilterInterrupted: reads interrupted anywhere (the stdio client
// interrupts its reader so that a call reads its own answer) lose nothing
// and change nothing: the filter hands on what it hands on uninterrupted.
func TestLineFilterInterrupted(t *testing.T) {
	big := func(n int) string { return `{"s":"` + strings.Repeat("y", n-8) + `"}` }
	const max = 1500
	ins := []string{
		"{\"a\":1}\n[1,2]\n",
		"Server v1 starting\n{\"a\":1}\nlog: hello\n\n  \n{\"b\":2}\r\n{not json}\n",
		"{\"a\":1}\n{\"b\":2}", // the last line without a newline
		big(1400) + "\n{\"a\":1}\n" + big(max) + "\n" + big(max+1) + "\n",
		big(3000) + "\n{\"a\":1}\n" + big(5000) + "\r\n{\"b\":1}\n",
		`{"jsonrpc":"2.0","id":7,"result":` + big(3000) + "}\n{\"a\":1}\n",
		"{\"a\":1}\n" + big(4000), // an oversized last line
	}
	cuts := 0
	for i, in := range ins {
		want, err := readLines(NewFilter(nopCloser{strings.NewReader(in)}, max, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 7, 100, 1499, 1500, 1501, 4096, 1 << 20} {
			f := NewFilter(nopCloser{&cutReader{r: strings.NewReader(in), n: n}}, max, nil, nil)
			var b strings.Builder
			for {
				line, err := f.Next()
				if Interrupted(err) {
					cuts++
					continue
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("input %d, reads of %d: %v", i, n, err)
				}
				b.Write(line)
			}
			if diff := cmp.Diff(want, b.String()); diff != "" {
				t.Errorf("input %d, reads of %d bytes, interrupted between them (-uninterrupted +interrupted):\n%s", i, n, diff)
			}
		}
	}
	if cuts < 1000 {
		t.Errorf("%d reads interrupted, want many", cuts)
	}
}
