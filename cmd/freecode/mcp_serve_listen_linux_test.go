//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sync/errgroup"
)

// listenFlood is how many subscriptions/listen streams the client
// opened (issue 30, item 3).
const listenFlood = 4000

// BenchmarkServeListenFlood is issue 30's item 3 against the real
// `freecode mcp serve --http`: listenFlood subscriptions/listen streams
// (2026-07-28) opened over loopback HTTP and held, by one client
// (one-name) or under a new client name each (a-name-each, which only the
// total cap stops). It reports how many the gateway took and refused, and
// its resident memory (VmRSS) before and after; the timed loop is another
// client opening one stream and closing it while the flood holds what it
// got.
func BenchmarkServeListenFlood(b *testing.B) {
	b.Run("one-name", func(b *testing.B) { benchListenFlood(b, func(int) string { return "flood" }) })
	b.Run("a-name-each", func(b *testing.B) { benchListenFlood(b, func(i int) string { return fmt.Sprintf("flood-%d", i) }) })
}

func benchListenFlood(b *testing.B, name func(int) string) {
	cfgPath, project := serveConfig(b)
	hs := startHTTPServe(b, cfgPath, project)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()

	// Warm up: one stream opened and closed, as the timed loop does.
	if s, err := openListen(ctx, hc, hs.url, hs.token, "warm", 0); err != nil {
		b.Fatalf("a first stream: %v\n%s", err, hs.stderrText())
	} else {
		s.Close()
	}
	before := vmRSS(b, hs.cmd.Process.Pid)

	var (
		mu      sync.Mutex
		held    []io.Closer
		refused atomic.Int64
		firstNo atomic.Value
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := range listenFlood {
		g.Go(func() error {
			s, err := openListen(gctx, hc, hs.url, hs.token, name(i), i+1)
			var ref *listenRefused
			switch {
			case errors.As(err, &ref):
				refused.Add(1)
				firstNo.CompareAndSwap(nil, ref.Error())
				return nil
			case err != nil:
				return err
			}
			mu.Lock()
			held = append(held, s)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatalf("the flood: %v\n%s", err, hs.stderrText())
	}
	defer func() {
		for _, s := range held {
			s.Close()
		}
	}()
	after := vmRSS(b, hs.cmd.Process.Pid)
	if no, ok := firstNo.Load().(string); ok {
		b.Logf("the first refusal: %s", no)
	}

	b.ResetTimer()
	for b.Loop() {
		s, err := openListen(ctx, hc, hs.url, hs.token, "other", 0)
		if err != nil {
			b.Fatalf("another client's stream: %v", err)
		}
		s.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(len(held)), "streams-held")
	b.ReportMetric(float64(refused.Load()), "streams-refused")
	b.ReportMetric(float64(before)/(1<<20), "rss-before-MB")
	b.ReportMetric(float64(after)/(1<<20), "rss-after-MB")
}

// listenRefused is a subscriptions/listen the server answered with an
// error instead of a stream.
type listenRefused struct {
	status int
	body   string
}

func (e *listenRefused) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.status, strings.TrimSpace(e.body))
}

// listenBody is a 2026-07-28 client's subscriptions/listen for tool list
// changes, its _meta naming the client.
func listenBody(client string, id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
		`"io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"}}}}`, id, client)
}

// openListen opens a subscriptions/listen stream at url as client, and
// returns it once the server acknowledged it (its first event); closing it
// ends the stream. A refusal is a *listenRefused.
func openListen(ctx context.Context, hc *http.Client, url, token, client string, id int) (io.Closer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(listenBody(client, id)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		return nil, &listenRefused{status: resp.StatusCode, body: string(body)}
	}
	// The first event is the acknowledgement, or the error the request
	// was answered with.
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("the stream ended before its first event: %w", err)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if strings.Contains(data, `"notifications/subscriptions/acknowledged"`) {
			return resp.Body, nil
		}
		resp.Body.Close()
		return nil, &listenRefused{status: resp.StatusCode, body: data}
	}
}

// vmRSS returns the resident memory of process pid, in bytes.
func vmRSS(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
