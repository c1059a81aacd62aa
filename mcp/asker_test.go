package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/freecode/freecode/internal/mcptest"
)

// formSchema is the form the ask tool sends: a required name, and a
// color whose default is blue.
var formSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string"},
		"color": map[string]any{"type": "string", "default": "blue"},
	},
	"required": []any{"name", "color"},
}

func answer(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}

// askServer is a go-sdk server with the tools that ask the client:
//
//	ask     an elicitation form (formSchema); answers "<action> <content>"
//	sample  a sampling request; answers with the model's text
//	wait    waits until release is closed
//	caps    answers the client capabilities the server sees (elicitation,
//	        sampling, roots), as JSON
//
// The tools ask the newest protocol's way (an input request in the
// result); for an older session the go-sdk server asks with a request of
// its own, as servers written before 2026-07-28 do.
func askServer(t *testing.T) (*mcptest.Server, chan struct{}) {
	s := newMemServer(t, "asker")
	release := make(chan struct{})
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcpsdk.Tool{Name: "ask", InputSchema: obj}, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["q"].(*mcpsdk.ElicitResult); ok {
			b, _ := json.Marshal(r.Content)
			return answer(r.Action + " " + string(b)), nil
		}
		return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{
			"q": &mcpsdk.ElicitParams{Mode: "form", Message: "who are you?", RequestedSchema: formSchema},
		}}, nil
	})
	s.AddTool(&mcpsdk.Tool{Name: "sample", InputSchema: obj}, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["s"].(*mcpsdk.CreateMessageWithToolsResult); ok {
			var texts []string
			for _, c := range r.Content {
				if tc, ok := c.(*mcpsdk.TextContent); ok {
					texts = append(texts, tc.Text)
				}
			}
			return answer("model " + r.Model + ": " + strings.Join(texts, " ")), nil
		}
		return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{
			"s": &mcpsdk.CreateMessageParams{MaxTokens: 10, Messages: []*mcpsdk.SamplingMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: "hi"}}}},
		}}, nil
	})
	s.AddTool(&mcpsdk.Tool{Name: "wait", InputSchema: obj}, func(ctx context.Context, _ *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return answer("waited"), nil
	})
	s.AddTool(&mcpsdk.Tool{Name: "caps", InputSchema: obj}, func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		// RootsV2 is what says roots were declared (Roots is always there).
		caps := req.Session.InitializeParams().Capabilities
		b, _ := json.Marshal(struct {
			Elicitation *mcpsdk.ElicitationCapabilities `json:"elicitation,omitempty"`
			Sampling    *mcpsdk.SamplingCapabilities    `json:"sampling,omitempty"`
			Roots       *mcpsdk.RootCapabilities        `json:"roots,omitempty"`
		}{caps.Elicitation, caps.Sampling, caps.RootsV2})
		return answer(string(b)), nil
	})
	return s, release
}

// startAsked starts a Conn to s at version v ("" negotiates) with opts.
func startAsked(t *testing.T, s *mcptest.Server, v string, opts ConnOptions) *Conn {
	t.Helper()
	opts.Dial = s.Dial
	c := newTestConnOpts(t, pinned("m", v), nil, &opts)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// elicitLog records the ElicitRequests an Answerer got.
type elicitLog struct {
	mu   sync.Mutex
	reqs []ElicitRequest
}

func (l *elicitLog) answerer(content map[string]any) *Answerer {
	return &Answerer{Elicit: func(_ context.Context, req *ElicitRequest) (*mcpsdk.ElicitResult, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, *req)
		l.mu.Unlock()
		return &mcpsdk.ElicitResult{Action: "accept", Content: content}, nil
	}}
}

func (l *elicitLog) got() []ElicitRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ElicitRequest(nil), l.reqs...)
}

func callResultText(t *testing.T, c *Conn, ctx context.Context, tool string) string {
	t.Helper()
	res, err := c.CallTool(ctx, tool, nil, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The Answerer in the call's context answers the form; the schema's default
// fills the field it left out; without an Answerer, or with one that answers
// no elicitation, the server hears "decline".
func TestElicitationGoesToTheAnswerer(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, _ := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Elicitation: true})
			var log elicitLog
			ctx := WithAnswerer(t.Context(), log.answerer(map[string]any{"name": "Ada"}), "call-1")
			if got, want := callResultText(t, c, ctx, "ask"), `accept {"color":"blue","name":"Ada"}`; got != want {
				t.Errorf("ask = %q, want %q", got, want)
			}
			reqs := log.got()
			if len(reqs) != 1 || reqs[0].Server != "m" || reqs[0].CallID != "call-1" || reqs[0].Params.Message != "who are you?" || reqs[0].Params.RequestedSchema == nil {
				t.Errorf("the Answerer got %+v", reqs)
			}
			if got := callResultText(t, c, t.Context(), "ask"); got != "decline null" {
				t.Errorf("ask without an Answerer = %q, want a decline", got)
			}
			ctx = WithAnswerer(t.Context(), &Answerer{}, "call-2")
			if got := callResultText(t, c, ctx, "ask"); got != "decline null" {
				t.Errorf("ask of an Answerer without Elicit = %q, want a decline", got)
			}
		})
	}
}

// A client that answers no elicitation or sampling does not declare them;
// one that does declares form and URL elicitation, and sampling.
func TestAnswererCapabilities(t *testing.T) {
	tests := []struct {
		name string
		opts ConnOptions
		want string
	}{
		{"none", ConnOptions{}, `{}`},
		{"both", ConnOptions{Elicitation: true, Sampling: true}, `{"elicitation":{"form":{},"url":{}},"sampling":{}}`},
	}
	for _, v := range versions {
		for _, tc := range tests {
			t.Run(versionName(v)+"/"+tc.name, func(t *testing.T) {
				s, _ := askServer(t)
				c := startAsked(t, s, v, tc.opts)
				if got := callResultText(t, c, t.Context(), "caps"); got != tc.want {
					t.Errorf("capabilities the server sees = %s, want %s", got, tc.want)
				}
			})
		}
	}
}

// Before 2026-07-28 the question does not say which call it is about: with
// calls of two frontends in flight on the server, nobody is asked; with
// calls of one, that one is, without a call id. Under the newest protocol
// the question comes inside its call, so its Answerer is asked all the same.
func TestElicitationWithSeveralCallsInFlight(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, release := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Elicitation: true})
			var a, b elicitLog
			answererA, answererB := a.answerer(map[string]any{"name": "A"}), b.answerer(map[string]any{"name": "B"})

			// A's call waits on the server while B's asks.
			waited := make(chan string, 1)
			go func() { waited <- callResultText(t, c, WithAnswerer(t.Context(), answererA, "a-1"), "wait") }()
			if err := s.AwaitRequests(t.Context(), "tools/call", 1); err != nil {
				t.Fatal(err)
			}
			got := callResultText(t, c, WithAnswerer(t.Context(), answererB, "b-1"), "ask")
			if v == "" {
				if got != `accept {"color":"blue","name":"B"}` || len(b.got()) != 1 || b.got()[0].CallID != "b-1" {
					t.Errorf("newest protocol: ask = %q, B asked %+v", got, b.got())
				}
			} else if got != "decline null" || len(a.got())+len(b.got()) != 0 {
				t.Errorf("two frontends in flight: ask = %q, A asked %d, B asked %d; want nobody asked", got, len(a.got()), len(b.got()))
			}

			// Two calls of A in flight: A is asked.
			got = callResultText(t, c, WithAnswerer(t.Context(), answererA, "a-2"), "ask")
			if got != `accept {"color":"blue","name":"A"}` {
				t.Errorf("one frontend in flight: ask = %q", got)
			}
			wantID := ""
			if v == "" {
				wantID = "a-2"
			}
			if reqs := a.got(); len(reqs) != 1 || reqs[0].CallID != wantID {
				t.Errorf("A asked %+v, want once with call id %q", reqs, wantID)
			}
			close(release)
			if got := <-waited; got != "waited" {
				t.Errorf("wait = %q", got)
			}
		})
	}
}

// WithAnswererOf asks whoever answers when the server asks: the following
// of a task another frontend adopted asks that one, and nobody once it
// says nobody. Told apart by pointer as any Answerer: with a call of A's
// in flight beside it, a question before 2026-07-28 still goes to A while
// the function says A.
func TestElicitationGoesToTheAnswererOfNow(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, release := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Elicitation: true})
			var a, b elicitLog
			answererA, answererB := a.answerer(map[string]any{"name": "A"}), b.answerer(map[string]any{"name": "B"})
			var mu sync.Mutex
			now := answererA
			ctx := WithAnswererOf(t.Context(), func() *Answerer {
				mu.Lock()
				defer mu.Unlock()
				return now
			}, "task-1")
			set := func(x *Answerer) {
				mu.Lock()
				now = x
				mu.Unlock()
			}

			waited := make(chan string, 1)
			go func() { waited <- callResultText(t, c, WithAnswerer(t.Context(), answererA, "a-1"), "wait") }()
			if err := s.AwaitRequests(t.Context(), "tools/call", 1); err != nil {
				t.Fatal(err)
			}
			if got := callResultText(t, c, ctx, "ask"); got != `accept {"color":"blue","name":"A"}` || len(a.got()) != 1 {
				t.Errorf("while it says A: ask = %q, A asked %+v", got, a.got())
			}
			close(release)
			if got := <-waited; got != "waited" {
				t.Errorf("wait = %q", got)
			}

			set(answererB)
			if got := callResultText(t, c, ctx, "ask"); got != `accept {"color":"blue","name":"B"}` || len(b.got()) != 1 || b.got()[0].CallID != "task-1" {
				t.Errorf("once it says B: ask = %q, B asked %+v", got, b.got())
			}
			set(nil)
			if got := callResultText(t, c, ctx, "ask"); got != "decline null" || len(a.got())+len(b.got()) != 2 {
				t.Errorf("once it says nobody: ask = %q, A asked %d, B asked %d", got, len(a.got()), len(b.got()))
			}
		})
	}
}

// A question nobody answers ends with the call that caused it: the
// Answerer's context is cancelled when the call is.
func TestElicitationEndsWithItsCall(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, _ := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Elicitation: true})
			entered, ended := make(chan struct{}), make(chan error, 1)
			answerer := &Answerer{Elicit: func(ctx context.Context, _ *ElicitRequest) (*mcpsdk.ElicitResult, error) {
				close(entered)
				<-ctx.Done()
				ended <- ctx.Err()
				return nil, ctx.Err()
			}}
			ctx, cancel := context.WithCancel(WithAnswerer(t.Context(), answerer, "slow"))
			done := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, "ask", nil, nil)
				done <- err
			}()
			<-entered
			cancel()
			if err := <-ended; !errors.Is(err, context.Canceled) {
				t.Errorf("the Answerer's context ended with %v, want cancelled", err)
			}
			if err := <-done; err == nil {
				t.Error("the cancelled call returned no error")
			}
		})
	}
}

// Sampling goes to the Answerer; without one the request is refused with a
// JSON-RPC error, which the call reports.
func TestSamplingGoesToTheAnswerer(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, _ := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Sampling: true})
			var got []*SampleRequest
			answerer := &Answerer{Sample: func(_ context.Context, req *SampleRequest) (*mcpsdk.CreateMessageResult, error) {
				got = append(got, req)
				return &mcpsdk.CreateMessageResult{Model: "m1", Role: "assistant", Content: &mcpsdk.TextContent{Text: "hello"}}, nil
			}}
			if res := callResultText(t, c, WithAnswerer(t.Context(), answerer, "s-1"), "sample"); res != "model m1: hello" {
				t.Errorf("sample = %q", res)
			}
			if len(got) != 1 || got[0].CallID != "s-1" || got[0].Params.MaxTokens != 10 {
				t.Errorf("the Answerer got %+v", got)
			}
			res := callResultText(t, c, t.Context(), "sample")
			if !strings.Contains(res, "sampling refused") {
				t.Errorf("sample without an Answerer = %q, want it refused", res)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		name    string
		schema  any
		content map[string]any
		want    map[string]any
	}{
		{"filled", formSchema, map[string]any{"name": "x"}, map[string]any{"name": "x", "color": "blue"}},
		{"kept", formSchema, map[string]any{"name": "x", "color": "red"}, map[string]any{"name": "x", "color": "red"}},
		{"nil content", formSchema, nil, map[string]any{"color": "blue"}},
		{"no schema", nil, map[string]any{"a": 1.0}, map[string]any{"a": 1.0}},
		{"raw schema", json.RawMessage(`{"properties":{"n":{"type":"integer","default":42}}}`), nil, map[string]any{"n": 42.0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := withDefaults(tc.schema, tc.content)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A Conn started by a request that carries an Answerer (a call or a
// resource read that wakes a server on demand) does not keep it: the
// session outlives that request, and a question the server asks later,
// during another frontend's call, goes to that frontend, not to the one
// whose request started it.
func TestAnswererOfTheStartIsNotKept(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, _ := askServer(t)
			var a, b elicitLog
			answererA, answererB := a.answerer(map[string]any{"name": "A"}), b.answerer(map[string]any{"name": "B"})
			opts := ConnOptions{Elicitation: true, Dial: s.Dial}
			c := newTestConnOpts(t, pinned("m", v), nil, &opts)
			if err := c.Start(WithAnswerer(t.Context(), answererA, "a-1")); err != nil {
				t.Fatal(err)
			}
			if got := callResultText(t, c, WithAnswerer(t.Context(), answererB, "b-1"), "ask"); got != `accept {"color":"blue","name":"B"}` {
				t.Errorf("B's call: ask = %q", got)
			}
			if len(a.got()) != 0 || len(b.got()) != 1 {
				t.Errorf("A asked %+v, B asked %+v; want B alone", a.got(), b.got())
			}
		})
	}
}
