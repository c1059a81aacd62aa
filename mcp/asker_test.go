package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
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
//	askfor  ask, for {"who": name}: "who are you, <name>?"
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
	// ask and askfor answer with the form's answer, once given.
	asker := func(message func(req *mcpsdk.CallToolRequest) string) mcpsdk.ToolHandler {
		return func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["q"].(*mcpsdk.ElicitResult); ok {
				b, _ := json.Marshal(r.Content)
				return answer(r.Action + " " + string(b)), nil
			}
			return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{
				"q": &mcpsdk.ElicitParams{Mode: "form", Message: message(req), RequestedSchema: formSchema},
			}}, nil
		}
	}
	s.AddTool(&mcpsdk.Tool{Name: "ask", InputSchema: obj}, asker(func(*mcpsdk.CallToolRequest) string { return "who are you?" }))
	s.AddTool(&mcpsdk.Tool{Name: "askfor", InputSchema: obj}, asker(func(req *mcpsdk.CallToolRequest) string {
		var args struct{ Who string }
		json.Unmarshal(req.Params.Arguments, &args)
		return "who are you, " + args.Who + "?"
	}))
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

// question is one elicitation an Asker was asked.
type question struct {
	Server, CallID string
	Params         *mcpsdk.ElicitParams
}

// askFuncs is an Asker of functions: without elicit it declines, without
// sample it refuses, and it has nobody to sign in.
type askFuncs struct {
	elicit func(ctx context.Context, q question) (*mcpsdk.ElicitResult, error)
	sample func(ctx context.Context, callID string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error)
}

func (a *askFuncs) Elicit(ctx context.Context, server, callID string, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	if a.elicit == nil {
		return nil, nil
	}
	return a.elicit(ctx, question{server, callID, p})
}

func (a *askFuncs) Sample(ctx context.Context, _, callID string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
	if a.sample == nil {
		return nil, errors.New("this one does no sampling")
	}
	return a.sample(ctx, callID, p)
}

func (*askFuncs) SignInOpener(string) func(context.Context, string) error { return nil }

// elicitLog records the questions an Asker got.
type elicitLog struct {
	mu   sync.Mutex
	reqs []question
}

func (l *elicitLog) asker(content map[string]any) *askFuncs {
	return &askFuncs{elicit: func(_ context.Context, q question) (*mcpsdk.ElicitResult, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, q)
		l.mu.Unlock()
		return &mcpsdk.ElicitResult{Action: "accept", Content: content}, nil
	}}
}

func (l *elicitLog) got() []question {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]question(nil), l.reqs...)
}

// callResultText calls tool with opts and returns the text of its result,
// or of its error.
func callResultText(t *testing.T, c *Conn, tool string, args map[string]any, opts *CallOptions) string {
	t.Helper()
	res, err := c.CallTool(t.Context(), tool, args, opts)
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

// by returns the options of the call id of asker.
func by(asker Asker, id string) *CallOptions { return &CallOptions{ID: id, Asker: asker} }

// The call's Asker answers the form, told the server and the call's id;
// the schema's default fills the field it left out; without an Asker, or
// with one that answers no elicitation, the server hears "decline".
func TestElicitationGoesToTheAsker(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, _ := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Elicitation: true})
			var log elicitLog
			if got, want := callResultText(t, c, "ask", nil, by(log.asker(map[string]any{"name": "Ada"}), "call-1")), `accept {"color":"blue","name":"Ada"}`; got != want {
				t.Errorf("ask = %q, want %q", got, want)
			}
			reqs := log.got()
			if len(reqs) != 1 || reqs[0].Server != "m" || reqs[0].CallID != "call-1" || reqs[0].Params.Message != "who are you?" || reqs[0].Params.RequestedSchema == nil {
				t.Errorf("the Asker got %+v", reqs)
			}
			if got := callResultText(t, c, "ask", nil, nil); got != "decline null" {
				t.Errorf("ask without an Asker = %q, want a decline", got)
			}
			if got := callResultText(t, c, "ask", nil, by(&askFuncs{}, "call-2")); got != "decline null" {
				t.Errorf("ask of an Asker that answers no elicitation = %q, want a decline", got)
			}
		})
	}
}

// A client that answers no elicitation or sampling does not declare them;
// one that does declares form and URL elicitation, and sampling.
func TestAskerCapabilities(t *testing.T) {
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
				if got := callResultText(t, c, "caps", nil, nil); got != tc.want {
					t.Errorf("capabilities the server sees = %s, want %s", got, tc.want)
				}
			})
		}
	}
}

// Before 2026-07-28 the question does not say which call it is about: with
// calls of two Askers in flight on the server, nobody is asked; with calls
// of one, that one is, without a call id. Under the newest protocol the
// question comes inside its call, so its Asker is asked all the same.
func TestElicitationWithSeveralCallsInFlight(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, release := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Elicitation: true})
			var a, b elicitLog
			askerA, askerB := a.asker(map[string]any{"name": "A"}), b.asker(map[string]any{"name": "B"})

			// A's call waits on the server while B's asks.
			waited := make(chan string, 1)
			go func() { waited <- callResultText(t, c, "wait", nil, by(askerA, "a-1")) }()
			if err := s.AwaitRequests(t.Context(), "tools/call", 1); err != nil {
				t.Fatal(err)
			}
			got := callResultText(t, c, "ask", nil, by(askerB, "b-1"))
			if v == "" {
				if got != `accept {"color":"blue","name":"B"}` || len(b.got()) != 1 || b.got()[0].CallID != "b-1" {
					t.Errorf("newest protocol: ask = %q, B asked %+v", got, b.got())
				}
			} else if got != "decline null" || len(a.got())+len(b.got()) != 0 {
				t.Errorf("two Askers in flight: ask = %q, A asked %d, B asked %d; want nobody asked", got, len(a.got()), len(b.got()))
			}

			// Two calls of A in flight: A is asked.
			got = callResultText(t, c, "ask", nil, by(askerA, "a-2"))
			if got != `accept {"color":"blue","name":"A"}` {
				t.Errorf("one Asker in flight: ask = %q", got)
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

// Two calls of two Askers ask at once, both in flight on one connection
// while both questions are open: each question reaches its own call's
// Asker with its own call's id, and neither the other's. (Before
// 2026-07-28 nothing tells the two apart, and the test above holds that
// nobody is asked then.)
func TestQuestionsOfTwoCallsGoToTheirOwnAskers(t *testing.T) {
	s, _ := askServer(t)
	c := startAsked(t, s, "", ConnOptions{Elicitation: true})
	var mu sync.Mutex
	got := map[string][]string{}
	arrived, both := make(chan struct{}, 2), make(chan struct{})
	asker := func(name string) *askFuncs {
		return &askFuncs{elicit: func(ctx context.Context, q question) (*mcpsdk.ElicitResult, error) {
			mu.Lock()
			got[name] = append(got[name], q.CallID+": "+q.Params.Message)
			mu.Unlock()
			arrived <- struct{}{}
			select { // answer only once both questions are open
			case <-both:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		}}
	}
	results := make(chan string, 2)
	go func() {
		results <- "A " + callResultText(t, c, "askfor", map[string]any{"who": "A"}, by(asker("A"), "a-1"))
	}()
	go func() {
		results <- "B " + callResultText(t, c, "askfor", map[string]any{"who": "B"}, by(asker("B"), "b-1"))
	}()
	for range 2 {
		select {
		case <-arrived:
		case r := <-results:
			t.Fatalf("a call ended before both questions were open: %s", r)
		}
	}
	close(both)
	res := []string{<-results, <-results}
	slices.Sort(res)
	if want := []string{`A accept {"color":"blue","name":"A"}`, `B accept {"color":"blue","name":"B"}`}; !slices.Equal(res, want) {
		t.Errorf("results %q, want %q", res, want)
	}
	want := map[string][]string{"A": {"a-1: who are you, A?"}, "B": {"b-1: who are you, B?"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("questions each Asker got (-want +got):\n%s", diff)
	}
}

// The rule of a question that names no request (a server's own request
// before 2026-07-28) goes by the requests in flight on its session, each
// one's Asker taken when the question comes (FollowOptions.AskerOf).
func TestWhoAnswersAServersOwnQuestion(t *testing.T) {
	a, b := &askFuncs{}, &askFuncs{}
	now := Asker(a)
	of := func() Asker { return now }
	tests := []struct {
		name     string
		inflight []asking
		want     asked
		nobody   bool
	}{
		{"none", nil, asked{}, true},
		{"one", []asking{{callID: "a-1", asker: a}}, asked{asker: a, callID: "a-1"}, false},
		{"one without an Asker", []asking{{callID: "x-1"}}, asked{callID: "x-1"}, false},
		{"two of one Asker", []asking{{callID: "a-1", asker: a}, {callID: "a-2", asker: a}}, asked{asker: a}, false},
		{"two of one Asker, one by who owns it now", []asking{{callID: "a-1", asker: a}, {callID: "t-1", askerOf: of}}, asked{asker: a}, false},
		{"two of two Askers", []asking{{callID: "a-1", asker: a}, {callID: "b-1", asker: b}}, asked{}, true},
		{"an Asker's and one of nobody's", []asking{{callID: "a-1", asker: a}, {callID: "x-1"}}, asked{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := new(mcpsdk.ClientSession)
			c := &Conn{inflight: map[*mcpsdk.ClientSession][]*inflight{}}
			for _, x := range tc.inflight {
				c.inflight[cs] = append(c.inflight[cs], &inflight{asking: x, ctx: t.Context()})
			}
			got, why := c.whoAnswers(t.Context(), cs)
			if (why != "") != tc.nobody || got.asker != tc.want.asker || got.callID != tc.want.callID {
				t.Errorf("whoAnswers = %+v (why %q), want %+v (nobody %v)", got, why, tc.want, tc.nobody)
			}
			if len(tc.inflight) == 1 && got.until == nil {
				t.Error("the question of the one request in flight does not end with it")
			}
		})
	}
	// A question asked inside a request is that request's, whatever else
	// is in flight.
	cs := new(mcpsdk.ClientSession)
	c := &Conn{inflight: map[*mcpsdk.ClientSession][]*inflight{cs: {{asking: asking{callID: "a-1", asker: a}}}}}
	inside := &inflight{asking: asking{callID: "b-1", asker: b}}
	if got, why := c.whoAnswers(context.WithValue(t.Context(), requestKey{}, inside), cs); got.asker != b || got.callID != "b-1" || why != "" {
		t.Errorf("a question inside B's request: %+v (why %q), want B's", got, why)
	}
}

// A question nobody answers ends with the call that caused it: the
// Asker's context is cancelled when the call is.
func TestElicitationEndsWithItsCall(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, _ := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Elicitation: true})
			entered, ended := make(chan struct{}), make(chan error, 1)
			asker := &askFuncs{elicit: func(ctx context.Context, _ question) (*mcpsdk.ElicitResult, error) {
				close(entered)
				<-ctx.Done()
				ended <- ctx.Err()
				return nil, ctx.Err()
			}}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, "ask", nil, by(asker, "slow"))
				done <- err
			}()
			<-entered
			cancel()
			if err := <-ended; !errors.Is(err, context.Canceled) {
				t.Errorf("the Asker's context ended with %v, want cancelled", err)
			}
			if err := <-done; err == nil {
				t.Error("the cancelled call returned no error")
			}
		})
	}
}

// Sampling goes to the Asker; without one the request is refused with a
// JSON-RPC error, which the call reports.
func TestSamplingGoesToTheAsker(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s, _ := askServer(t)
			c := startAsked(t, s, v, ConnOptions{Sampling: true})
			type sampled struct {
				callID string
				p      *mcpsdk.CreateMessageParams
			}
			var got []sampled
			asker := &askFuncs{sample: func(_ context.Context, callID string, p *mcpsdk.CreateMessageParams) (*mcpsdk.CreateMessageResult, error) {
				got = append(got, sampled{callID, p})
				return &mcpsdk.CreateMessageResult{Model: "m1", Role: "assistant", Content: &mcpsdk.TextContent{Text: "hello"}}, nil
			}}
			if res := callResultText(t, c, "sample", nil, by(asker, "s-1")); res != "model m1: hello" {
				t.Errorf("sample = %q", res)
			}
			if len(got) != 1 || got[0].callID != "s-1" || got[0].p.MaxTokens != 10 {
				t.Errorf("the Asker got %+v", got)
			}
			for _, opts := range []*CallOptions{nil, by(&askFuncs{}, "s-2")} {
				if res := callResultText(t, c, "sample", nil, opts); !strings.Contains(res, "sampling refused") {
					t.Errorf("sample without an Asker that samples = %q, want it refused", res)
				}
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
