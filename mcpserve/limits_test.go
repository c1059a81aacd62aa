package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// listenStream is a subscriptions/listen stream a test holds open.
type listenStream struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// next returns the data of the stream's next event.
func (s *listenStream) next() (string, error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(data), nil
		}
	}
}

// listenError is the JSON-RPC error a subscriptions/listen was refused
// with.
type listenError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

func (e *listenError) Error() string { return fmt.Sprintf("%d %s %v", e.Code, e.Message, e.Data) }

// openListen opens a subscriptions/listen stream for tool list changes at
// url as a 2026-07-28 client named client, over hc, and returns it once
// the server acknowledged it; a refusal is a *listenError.
func openListen(ctx context.Context, hc *http.Client, url, client string, id int) (*listenStream, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
		`"io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"}}}}`, id, client)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, b)
	}
	s := &listenStream{body: resp.Body, r: bufio.NewReader(resp.Body)}
	first, err := s.next()
	if err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("the stream ended before its first event: %w", err)
	}
	var msg struct {
		Method string       `json:"method"`
		Error  *listenError `json:"error"`
	}
	if err := json.Unmarshal([]byte(first), &msg); err != nil || msg.Method != "notifications/subscriptions/acknowledged" {
		resp.Body.Close()
		if msg.Error != nil {
			return nil, msg.Error
		}
		return nil, fmt.Errorf("the stream began with %s, not the acknowledgement", first)
	}
	return s, nil
}

// heapInUse is the heap the process uses once the garbage is collected.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// Issue 30, item 3: a client that opens subscriptions/listen streams
// without end over HTTP gets maxListensPerClient of them, and every one
// past that is refused at once with an error that says the cap and how
// many it holds; clients all together get maxListens. The streams held
// still hear a list change, one closed makes room for another, and
// thousands refused leave the heap about where the streams held put it.
func TestListenCaps(t *testing.T) {
	e := newEnv(t, []map[string]any{backend(t, "srv")}, nil)
	e.open(t)
	url := e.serveHTTP(t, "")
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	var held []*listenStream
	t.Cleanup(func() {
		for _, s := range held {
			s.body.Close()
		}
	})
	base := heapInUse()

	for i := range maxListensPerClient {
		s, err := openListen(t.Context(), hc, url, "greedy", i)
		if err != nil {
			t.Fatalf("stream %d of a client: %v", i+1, err)
		}
		held = append(held, s)
	}
	refusal := func(t *testing.T, client string, want listenError) {
		t.Helper()
		s, err := openListen(t.Context(), hc, url, client, 1000)
		if err == nil {
			s.body.Close()
			t.Fatalf("a stream of %q past the cap was opened", client)
		}
		got, ok := err.(*listenError)
		if !ok {
			t.Fatalf("a stream of %q past the cap: %v, want a JSON-RPC error", client, err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("the refusal of a stream of %q (-want +got):\n%s", client, diff)
		}
	}
	t.Run("per client", func(t *testing.T) {
		refusal(t, "greedy", listenError{
			Code:    CodeTooManyListens,
			Message: `the client "greedy" holds 16 subscriptions/listen streams, the most one client may; close one to open another`,
			Data:    map[string]any{"limit": 16.0, "open": 16.0, "scope": "client"},
		})
	})

	// Other clients fill what is left of the total.
	for i := len(held); i < maxListens; i++ {
		s, err := openListen(t.Context(), hc, url, fmt.Sprintf("client-%d", i), i)
		if err != nil {
			t.Fatalf("stream %d of all: %v", i+1, err)
		}
		held = append(held, s)
	}
	t.Run("in total", func(t *testing.T) {
		refusal(t, "newcomer", listenError{
			Code:    CodeTooManyListens,
			Message: `this server holds 128 subscriptions/listen streams, the most it holds for all its clients; close one to open another`,
			Data:    map[string]any{"limit": 128.0, "open": 128.0, "scope": "server"},
		})
	})

	// The flood: thousands more, from the client at its cap and from new
	// names, all refused.
	const flood = 2000
	var opened atomic.Int64
	g, gctx := errgroup.WithContext(t.Context())
	g.SetLimit(32)
	for i := range flood {
		g.Go(func() error {
			client := "greedy"
			if i%2 == 1 {
				client = fmt.Sprintf("flood-%d", i)
			}
			s, err := openListen(gctx, hc, url, client, i)
			if err == nil {
				opened.Add(1)
				s.body.Close()
				return nil
			}
			if le, ok := err.(*listenError); !ok || le.Code != CodeTooManyListens {
				return err
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("the flood: %v", err)
	}
	if n := opened.Load(); n != 0 {
		t.Errorf("%d of the flood's %d streams were opened past the caps", n, flood)
	}
	tr.CloseIdleConnections()
	// What the streams held cost (client and server, both in this
	// process) and what the refusals left. 4,000 streams held took some
	// 350 MB: the bound is far below that and far above the 128 held.
	grown := int64(heapInUse()) - int64(base)
	t.Logf("the heap grew by %.1f MB holding %d streams, after %d refused", float64(grown)/(1<<20), len(held), flood)
	if grown > 48<<20 {
		t.Errorf("the heap grew by %.1f MB holding %d streams, after %d refused; want the refusals to cost nothing lasting", float64(grown)/(1<<20), len(held), flood)
	}

	// A held stream still hears a list change.
	e.s.mcp.AddTool(&mcpsdk.Tool{Name: "listen_probe", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) { return text("ok"), nil })
	heard := make(chan string, 1)
	go func() {
		ev, err := held[0].next()
		if err != nil {
			ev = err.Error()
		}
		heard <- ev
	}()
	if ev := waitFor(t, heard, "list change on a held stream"); !strings.Contains(ev, `"notifications/tools/list_changed"`) {
		t.Errorf("a held stream's next event: %s, want tools/list_changed", ev)
	}

	// One stream of the client closed makes room for one more, once the
	// server saw it close.
	held[1].body.Close()
	held = append(held[:1], held[2:]...)
	deadline := time.Now().Add(hangGuard) // a hang guard only
	for {
		s, err := openListen(t.Context(), hc, url, "greedy", 5000)
		if err == nil {
			held = append(held, s)
			break
		}
		if _, ok := err.(*listenError); !ok || time.Now().After(deadline) {
			t.Fatalf("a stream after one of the client's closed: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Over stdio the one client is capped alike: its listens past the cap are
// answered with the error, and the session goes on.
func TestListenCapStdio(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.open(t)
	ct, st := stdioPipes(t)
	if _, err := e.s.Connect(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ct.Writer.Close()
		ct.Reader.Close()
	})
	const n = maxListensPerClient + 2
	go func() {
		for i := 1; i <= n; i++ {
			fmt.Fprintf(ct.Writer, `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`+"\n", i, meta2026)
		}
		fmt.Fprintf(ct.Writer, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`+"\n", n+1, meta2026)
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(ct.Reader)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	acks, refused := 0, 0
	for listed := false; !listed || acks+refused < n; {
		line, ok := waitForOK(t, lines, "an answer on stdio")
		if !ok {
			t.Fatalf("the session ended after %d acknowledgements and %d refusals", acks, refused)
		}
		var msg struct {
			ID     int          `json:"id"`
			Method string       `json:"method"`
			Error  *listenError `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case msg.Method == "notifications/subscriptions/acknowledged":
			acks++
		case msg.Error != nil && msg.Error.Code == CodeTooManyListens:
			refused++
			if !strings.Contains(msg.Error.Message, "holds 16 subscriptions/listen streams") {
				t.Errorf("the refusal says %q", msg.Error.Message)
			}
		case msg.ID == n+1:
			listed = true
		default:
			t.Errorf("unexpected: %s", line)
		}
	}
	if acks != maxListensPerClient || refused != n-maxListensPerClient {
		t.Errorf("%d listens acknowledged and %d refused, want %d and %d", acks, refused, maxListensPerClient, n-maxListensPerClient)
	}
}
