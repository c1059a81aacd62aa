package mcp

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/freecode/freecode/internal/mcpwire"
)

// nopCloser makes a strings.Reader an io.ReadCloser.
type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

func TestDefaultBackoff(t *testing.T) {
	// Jittered into [d/2, d] of 0.5 s doubling to 30 s.
	for attempt, d := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		for range 50 {
			if got := defaultBackoff(attempt); got < d/2 || got > d {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, got, d/2, d)
			}
		}
	}
}

func TestTokenKey(t *testing.T) {
	for _, tc := range []struct {
		tok  any
		want string
	}{{"abc", "abc"}, {float64(42), "42"}, {int64(7), "7"}} {
		if got := tokenKey(tc.tok); got != tc.want {
			t.Errorf("tokenKey(%v) = %q, want %q", tc.tok, got, tc.want)
		}
	}
}

func TestStdioConnReadsBatches(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/initialized"}]` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	f := mcpwire.NewFilter(nopCloser{strings.NewReader(in)}, 1<<20, slog.New(slog.DiscardHandler), nil)
	c := newStdioConn(f, nil, nopWriteCloser{}, nil)
	var got []string
	for {
		msg, err := c.Read(t.Context())
		if err != nil {
			break
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			got = append(got, "request "+m.Method)
		case *jsonrpc.Response:
			got = append(got, fmt.Sprint("response ", m.ID.Raw()))
		}
	}
	want := []string{"response 1", "request notifications/initialized", "response 2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }
