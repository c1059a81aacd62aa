package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/mcptest"
)

// listEvents records a Conn's ListChanged events and lets a test await them.
type listEvents struct {
	mu     sync.Mutex
	events []string // "kind reason"
	ch     chan struct{}
}

func newListEvents() *listEvents { return &listEvents{ch: make(chan struct{})} }

func (l *listEvents) add(ev ListChanged) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev.Kind+" "+ev.Reason)
	close(l.ch)
	l.ch = make(chan struct{})
}

// await waits until n events were recorded and returns them.
func (l *listEvents) await(t *testing.T, n int) []string {
	t.Helper()
	for {
		l.mu.Lock()
		got, ch := append([]string(nil), l.events...), l.ch
		l.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-t.Context().Done():
			t.Fatalf("waiting for %d list events: have %q", n, got)
		}
	}
}

func (l *listEvents) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

// textResource adds a resource to s whose contents are text.
func textResource(s *mcptest.Server, uri, name, text string) {
	s.SDK().AddResource(&mcpsdk.Resource{URI: uri, Name: name, MIMEType: "text/plain", Description: "about " + name},
		func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
		})
}

func greetPrompt(s *mcptest.Server) {
	s.SDK().AddPrompt(&mcpsdk.Prompt{Name: "greet", Title: "Greet", Description: "say hello",
		Arguments: []*mcpsdk.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
			return &mcpsdk.GetPromptResult{Messages: []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
}

// versions are the two ways a session runs: the newest protocol, and the
// one before it (the server's questions then come as requests of its own).
var versions = []string{"", config.DefaultProtocolVersion}

func versionName(v string) string {
	if v == "" {
		return "negotiated"
	}
	return v
}

// pinned returns memSrv(name), pinned to version ("" negotiates).
func pinned(name, version string) config.Server {
	srv := memSrv(name)
	srv.ProtocolVersion = version
	return srv
}

// Resources and prompts are listed after the connect, read and got, and
// re-listed on list_changed; OnListChanged hears of a real change only.
func TestMemResourcesAndPrompts(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s := newMemServer(t, "mem")
			textResource(s, "file:///a.txt", "a.txt", "alpha")
			greetPrompt(s)
			ev := newListEvents()
			c := newTestConnOpts(t, pinned("m", v), nil, &ConnOptions{Dial: s.Dial})
			c.onLists = ev.add
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			res, err := c.Resources(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := []*mcpsdk.Resource{{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain", Description: "about a.txt"}}
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			prompts, err := c.Prompts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(prompts) != 1 || prompts[0].Name != "greet" || prompts[0].Title != "Greet" || len(prompts[0].Arguments) != 1 {
				t.Errorf("prompts = %+v", prompts)
			}
			rr, err := c.ReadResource(t.Context(), "file:///a.txt", nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rr.Contents) != 1 || rr.Contents[0].Text != "alpha" {
				t.Errorf("read = %+v", rr.Contents)
			}
			// Read again: under the newest protocol the go-sdk keeps what
			// it read; the Conn drops that copy, and reads anew.
			if rr2, err := c.ReadResource(t.Context(), "file:///a.txt", nil); err != nil || len(rr2.Contents) != 1 || rr2.Contents[0].Text != "alpha" {
				t.Errorf("second read = %+v, %v", rr2, err)
			}
			gp, err := c.GetPrompt(t.Context(), "greet", map[string]string{"who": "you"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(gp.Messages) != 1 || gp.Messages[0].Content.(*mcpsdk.TextContent).Text != "hello you" {
				t.Errorf("prompt = %+v", gp.Messages)
			}
			if diff := cmp.Diff([]string{"resources connected", "prompts connected"}, ev.await(t, 2)); diff != "" {
				t.Errorf("events after the connect (-want +got):\n%s", diff)
			}

			// A new resource: list_changed, a real change.
			textResource(s, "file:///b.txt", "b.txt", "beta")
			ev.await(t, 3)
			res, _ = c.Resources(t.Context())
			if len(res) != 2 {
				t.Errorf("after list_changed: %d resources, want 2", len(res))
			}
			// The same resource again: the server says list_changed, but
			// nothing changed, so no event. A prompt change that follows
			// is the next event.
			textResource(s, "file:///b.txt", "b.txt", "beta")
			s.SDK().AddPrompt(&mcpsdk.Prompt{Name: "bye"}, func(context.Context, *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
				return &mcpsdk.GetPromptResult{}, nil
			})
			got := ev.await(t, 4)
			if diff := cmp.Diff([]string{"resources connected", "prompts connected", "resources listChanged", "prompts listChanged"}, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}

			// The server goes: its lists go with it.
			c.Close()
			if diff := cmp.Diff([]string{"resources stopped", "prompts stopped"}, ev.snapshot()[4:]); diff != "" {
				t.Errorf("events at Close (-want +got):\n%s", diff)
			}
		})
	}
}

// The first lists' events follow the "connected" status, even when
// whoever hears of the tools takes its time: a frontend that reads a
// server's resources on their event finds it connected (it reads none of
// a server it thinks is connecting). In the bubble the slow hook's timer
// fires only once every other goroutine is blocked, so a listing that does
// not wait for the status has had every chance to overtake it: no real
// time decides the test.
func TestMemListsAfterConnected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemServer(t, "mem")
		textResource(s, "file:///a.txt", "a.txt", "alpha")
		greetPrompt(s)
		ev := newListEvents()
		listed := make(chan struct{})
		var once sync.Once
		c := newTestConnOpts(t, memSrv("m"), nil, &ConnOptions{Dial: s.Dial, OnStatus: func(st Status) {
			ev.add(ListChanged{Kind: "status", Reason: st.State.String()})
		}})
		c.onLists = func(l ListChanged) {
			once.Do(func() { close(listed) })
			ev.add(l)
		}
		c.onTools = func(string, []*mcpsdk.Tool) {
			// Slow, as a registry rebuild may be.
			select {
			case <-listed:
			case <-time.After(time.Minute):
			}
		}
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		want := []string{"status connecting", "status connected", "resources connected", "prompts connected"}
		if diff := cmp.Diff(want, ev.await(t, 4)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

// A reconnect that brings the same lists tells nobody.
func TestMemListsSurviveReconnect(t *testing.T) {
	s := newMemServer(t, "mem")
	textResource(s, "file:///a.txt", "a.txt", "alpha")
	ev := newListEvents()
	rec := mcptest.NewRecorder()
	c := memConn(t, s, "m", rec, nil)
	c.onLists = ev.add
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resources(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	rec.MustAwait(t, mcptest.ReachedStateTimes("m", StateConnected, 2))
	if _, err := c.Resources(t.Context()); err != nil { // waits for the new session's listing
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"resources connected"}, ev.snapshot()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// A server that declares no resources or prompts has none, and reading
// one is ErrNotOffered.
func TestMemNoResources(t *testing.T) {
	s := newMemServer(t, "mem")
	c := memConn(t, s, "m", nil, nil)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Resources(t.Context())
	if err != nil || len(res) != 0 {
		t.Errorf("Resources = %v, %v", res, err)
	}
	if _, err := c.ReadResource(t.Context(), "file:///x", nil); !errors.Is(err, ErrNotOffered) {
		t.Errorf("ReadResource = %v, want ErrNotOffered", err)
	}
	if _, err := c.GetPrompt(t.Context(), "x", nil, nil); !errors.Is(err, ErrNotOffered) {
		t.Errorf("GetPrompt = %v, want ErrNotOffered", err)
	}
}

// pagedDial connects an in-memory session of server, closed at cleanup.
func pagedDial(t *testing.T, server *mcpsdk.Server) func(context.Context, config.Server) (mcpsdk.Transport, error) {
	return func(ctx context.Context, _ config.Server) (mcpsdk.Transport, error) {
		st, ct := mcpsdk.NewInMemoryTransports()
		ss, err := server.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { ss.Close() })
		return ct, nil
	}
}

// Every page is read, in order.
func TestMemResourcesPaged(t *testing.T) {
	server := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "paged", Version: "1"}, &mcpsdk.ServerOptions{PageSize: 2})
	for i := range 5 {
		uri := fmt.Sprintf("file:///r%d", i)
		server.AddResource(&mcpsdk.Resource{URI: uri, Name: fmt.Sprint(i)}, func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return nil, nil
		})
	}
	c := newTestConnOpts(t, memSrv("p"), nil, &ConnOptions{Dial: pagedDial(t, server)})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Resources(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"0", "1", "2", "3", "4"}, names); diff != "" {
		t.Errorf("resources over 3 pages (-want +got):\n%s", diff)
	}
}

// listPages stops on a repeated cursor, after maxToolPages pages, and past
// its byte bound, keeping what it read.
func TestListPagesBounds(t *testing.T) {
	tests := []struct {
		name    string
		bytes   int
		next    func(page int) string
		wantN   int
		wantCut string
	}{
		{"ends", 1 << 20, func(p int) string {
			if p == 2 {
				return ""
			}
			return fmt.Sprint(p + 1)
		}, 3, ""},
		{"repeated cursor", 1 << 20, func(int) string { return "again" }, 2, "cut after 2 pages: the server repeated a cursor"},
		{"endless", 1 << 30, func(p int) string { return fmt.Sprint(p + 1) }, maxToolPages, "cut at 1000 pages: the server kept handing out cursors"},
		{"bytes", 100, func(p int) string { return fmt.Sprint(p + 1) }, 3, "cut at 3 entries: they passed the bound of 100 bytes on one list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := 0
			got, cut, err := listPages(t.Context(), tc.bytes, func(_ context.Context, cursor string) ([]string, string, error) {
				if page == 0 && cursor != "" {
					t.Errorf("first cursor %q, want none", cursor)
				}
				p := page
				page++
				return []string{strings.Repeat("x", 25)}, tc.next(p), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.wantN || cut != tc.wantCut {
				t.Errorf("got %d entries, cut %q; want %d, %q", len(got), cut, tc.wantN, tc.wantCut)
			}
		})
	}
}
