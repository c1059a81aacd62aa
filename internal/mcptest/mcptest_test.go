package mcptest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/freecode/freecode/config"

	_ "github.com/freecode/freecode/internal/racetest" // helper processes exit without the race runtime's pause
)

func TestMain(m *testing.M) {
	RunTasksServerIfAsked()
	goleak.VerifyTestMain(m)
}

type state string

func (s state) String() string { return string(s) }

func connect(t *testing.T, s *Server) *mcpsdk.ClientSession {
	t.Helper()
	tr, err := s.Dial(t.Context(), config.Server{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestServerToolsAndKill(t *testing.T) {
	s := NewServer("x", Tool("a"))
	defer s.Close()
	cs := connect(t, s)
	res, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "a", Arguments: map[string]any{"k": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcpsdk.TextContent).Text; got != `a: {"k":1}` {
		t.Errorf("a = %q", got)
	}
	s.SetTools(Tool("b"), Tool("c"))
	if diff := cmp.Diff([]string{"b", "c"}, s.ToolNames()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if got := s.Calls("a"); got != 1 {
		t.Errorf("Calls(a) = %d", got)
	}
	s.Kill()
	_ = cs.Wait() // returns once the session has ended
	if _, err := cs.ListTools(t.Context(), nil); err == nil {
		t.Error("ListTools after Kill succeeded")
	}
}

func TestServerFailConnects(t *testing.T) {
	s := NewServer("x")
	defer s.Close()
	s.FailConnects(2)
	for range 2 {
		if _, err := s.Dial(t.Context(), config.Server{}); !errors.Is(err, ErrConnectRefused) {
			t.Fatalf("Dial = %v, want ErrConnectRefused", err)
		}
	}
	connect(t, s)
	if got := s.Dials(); got != 3 {
		t.Errorf("Dials = %d, want 3", got)
	}
}

func TestServerMute(t *testing.T) {
	s := NewServer("x")
	defer s.Close()
	cs := connect(t, s)
	s.Mute()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- cs.Ping(ctx, nil) }()
	if err := s.AwaitRequests(t.Context(), "ping", 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("a muted server answered a ping")
	}
	s.Unmute()
	if err := cs.Ping(t.Context(), nil); err != nil {
		t.Errorf("ping after Unmute: %v", err)
	}
}

func TestRecorderAwait(t *testing.T) {
	r := NewRecorder()
	done := make(chan error, 1)
	go func() {
		done <- r.Await(t.Context(), ReachedStateTimes("x", state("up"), 2), ToolsChangedFor("x", "connected", 1))
	}()
	r.Status("x", state("up"), "")
	r.Tools("x", "connected", []*mcpsdk.Tool{Tool("a")})
	r.Status("x", state("down"), "gone")
	r.Status("x", state("up"), "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"up", "down", "up"}, r.States("x")); diff != "" {
		t.Errorf("States (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"connected:a"}, r.ToolChanges("x")); diff != "" {
		t.Errorf("ToolChanges (-want +got):\n%s", diff)
	}
}

func TestRecorderAwaitFailureSaysWhatItSaw(t *testing.T) {
	r := NewRecorder()
	r.Status("x", state("failed"), "boom")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := r.Await(ctx, InState("x", state("connected")))
	if err == nil {
		t.Fatal("Await met an expectation nothing met")
	}
	for _, want := range []string{"unmet: x is in state connected", `x: status failed (lastError "boom")`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	never := Expect("never", func([]Event) Verdict { return Unmeetable })
	if err := r.Await(t.Context(), never); err == nil || !strings.Contains(err.Error(), "unmeetable: never") {
		t.Errorf("Await(unmeetable) = %v", err)
	}
}
