package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// asked records the questions a fake editor was asked.
type asked struct {
	mu      sync.Mutex
	elicits []protocol.ElicitationRequest
	samples []protocol.SamplingRequest
}

// elicit answers every form with content and records it.
func (a *asked) elicit(action protocol.ElicitationAction, content map[string]any) func(context.Context, *protocol.ElicitationRequest) (*protocol.ElicitationResponse, error) {
	return func(_ context.Context, req *protocol.ElicitationRequest) (*protocol.ElicitationResponse, error) {
		a.mu.Lock()
		a.elicits = append(a.elicits, *req)
		a.mu.Unlock()
		return &protocol.ElicitationResponse{Action: action, Content: content}, nil
	}
}

// sample answers every sampling request with a text from model, and
// records it.
func (a *asked) sample(model, text string) func(context.Context, *protocol.SamplingRequest) (*protocol.SamplingResult, error) {
	return func(_ context.Context, req *protocol.SamplingRequest) (*protocol.SamplingResult, error) {
		a.mu.Lock()
		a.samples = append(a.samples, *req)
		a.mu.Unlock()
		content, _ := json.Marshal(map[string]string{"type": "text", "text": text})
		return &protocol.SamplingResult{Role: "assistant", Content: content, Model: model, StopReason: "endTurn"}, nil
	}
}

func (a *asked) got() ([]protocol.ElicitationRequest, []protocol.SamplingRequest) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]protocol.ElicitationRequest(nil), a.elicits...), append([]protocol.SamplingRequest(nil), a.samples...)
}

// byVersion runs test with one test server (srv) negotiating the newest
// protocol, where a server asks inside the call's result, and again pinned
// to 2025-11-25, where it sends a request of its own.
func byVersion(t *testing.T, test func(t *testing.T, env *servertest.Env), opts ...servertest.Option) {
	for _, v := range []string{"", "2025-11-25"} {
		name, files := "negotiated", oneServer
		if v != "" {
			name = v
			files = "-- config.json --\n" + `{"mcp": {"servers": [` + servertest.Server("srv", map[string]any{"protocolVersion": v}) + `]}}` + "\n"
		}
		t.Run(name, func(t *testing.T) { servertest.Run(t, files, test, opts...) })
	}
}

// A server's form goes to the frontend whose call it came during, and to
// no other; the schema's default fills the field the answer left out; a
// URL goes to that frontend to open.
func TestElicitationGoesToItsFrontend(t *testing.T) {
	byVersion(t, func(t *testing.T, env *servertest.Env) {
		var a1, a2 asked
		one := env.Connect("one", &servertest.EditorOptions{Elicit: a1.elicit(protocol.ElicitAccept, map[string]any{"name": "wrong"})})
		two := env.Connect("two", &servertest.EditorOptions{Elicit: a2.elicit(protocol.ElicitAccept, map[string]any{"name": "Ada"})})
		two.AwaitStatus("srv", protocol.StateConnected)

		r := execute(t, two, call("e1", "mcp__srv__elicit", `{}`))
		if want := `accept {"count":3,"name":"Ada"}`; r.IsError || r.Text() != want {
			t.Errorf("elicit: %q, want %q", r.Text(), want)
		}
		got, _ := a2.got()
		if len(got) != 1 {
			t.Fatalf("two was asked %d times, want once", len(got))
		}
		var schema map[string]any
		if err := json.Unmarshal(got[0].RequestedSchema, &schema); err != nil {
			t.Fatalf("requestedSchema %s: %v", got[0].RequestedSchema, err)
		}
		got[0].RequestedSchema = nil
		if diff := cmp.Diff(protocol.ElicitationRequest{Server: "srv", CallID: "e1", Mode: protocol.ElicitForm, Message: "who are you?"}, got[0]); diff != "" {
			t.Errorf("the request (-want +got):\n%s", diff)
		}
		if props, _ := schema["properties"].(map[string]any); props["count"] == nil || props["name"] == nil {
			t.Errorf("requestedSchema: %v", schema)
		}

		r = execute(t, two, call("e2", "mcp__srv__elicit_url", `{"url":"https://example.com/confirm"}`))
		if r.IsError || r.Text() != "accept" {
			t.Errorf("elicit_url: %q", r.Text())
		}
		if got, _ := a2.got(); len(got) != 2 || got[1].Mode != protocol.ElicitURL || got[1].URL != "https://example.com/confirm" ||
			got[1].Message != "open this page" || got[1].RequestedSchema != nil {
			t.Errorf("the URL request: %+v", got[1:])
		}
		if got, _ := a1.got(); len(got) != 0 {
			t.Errorf("one was asked about two's calls: %+v", got)
		}
		_ = one
	}, servertest.Modes(servertest.MultiModes))
}

// Nobody to ask is a decline: a frontend that did not declare elicitation
// is never sent the request, and one that declared it without
// implementing it (method not found) declines as well.
func TestElicitationDeclined(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		silent := env.Editor
		deaf := env.Connect("deaf", &servertest.EditorOptions{Capabilities: &protocol.ClientCapabilities{Elicitation: true, Sampling: true}})
		deaf.AwaitStatus("srv", protocol.StateConnected)
		for _, ed := range []*servertest.Editor{silent, deaf} {
			r := execute(t, ed, call("e-"+ed.Name, "mcp__srv__elicit", `{}`))
			if r.IsError || !strings.HasPrefix(r.Text(), "decline") {
				t.Errorf("%s: elicit: %q, want a decline", ed.Name, r.Text())
			}
			r = execute(t, ed, call("s-"+ed.Name, "mcp__srv__sample", `{"text":"hi"}`))
			if !r.IsError || !strings.Contains(r.Text(), "sampling refused") {
				t.Errorf("%s: sample: %v %q, want refused", ed.Name, r.IsError, r.Text())
			}
		}
		// The editor's trace: what it received.
		if got := linesOf(env.Log(), "editor recv "); strings.Contains(got, protocol.MethodElicitationRequest) || strings.Contains(got, protocol.MethodSamplingRequest) {
			t.Errorf("the frontend that declared neither was asked:\n%s", got)
		}
	}, servertest.Modes(servertest.MultiModes))
}

// linesOf returns the lines of log that start with prefix.
func linesOf(log, prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, prefix) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// A question ends with its call: cancelling the batch cancels the form the
// frontend shows ($/cancelRequest), and the call ends.
func TestElicitationEndsWithItsCall(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	shown := make(chan struct{}, 1)
	wait := func(ctx context.Context, req *protocol.ElicitationRequest) (*protocol.ElicitationResponse, error) {
		shown <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return nil, ctx.Err()
	}
	byVersion(t, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := ed.Execute(ctx, call("e1", "mcp__srv__elicit", `{}`))
			done <- err
		}()
		awaitSignal(t, shown, "the form shown")
		cancel()
		awaitSignal(t, cancelled, "the form cancelled")
		if err := <-done; err == nil {
			t.Errorf("the cancelled batch answered without an error")
		}
		// The server is still there for the next call.
		if r := execute(t, ed, call("e2", "mcp__srv__echo", `{"text":"after"}`)); r.IsError || r.Text() != "after" {
			t.Errorf("echo after: %q", r.Text())
		}
	}, servertest.WithEditor(servertest.EditorOptions{Elicit: wait}))
}

// awaitSignal waits for ch, failing the test after servertest.HangGuard.
func awaitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(servertest.HangGuard):
		t.Fatalf("no %s within %v", what, servertest.HangGuard)
	}
}

// Sampling goes to the frontend whose call asked, with the server's
// params as they are; the frontend's refusal reaches the call with its
// message.
func TestSamplingGoesToItsFrontend(t *testing.T) {
	byVersion(t, func(t *testing.T, env *servertest.Env) {
		var a1, a2 asked
		one := env.Connect("one", &servertest.EditorOptions{Sample: a1.sample("m1", "wrong")})
		two := env.Connect("two", &servertest.EditorOptions{Sample: a2.sample("m2", "forty-two")})
		two.AwaitStatus("srv", protocol.StateConnected)

		r := execute(t, two, call("s1", "mcp__srv__sample", `{"text":"the answer?"}`))
		if r.IsError || r.Text() != "m2: forty-two" {
			t.Errorf("sample: %v %q", r.IsError, r.Text())
		}
		_, got := a2.got()
		if len(got) != 1 || got[0].Server != "srv" || got[0].CallID != "s1" {
			t.Fatalf("two was asked %+v", got)
		}
		var params struct {
			Messages []struct {
				Role    string `json:"role"`
				Content struct {
					Type, Text string
				} `json:"content"`
			} `json:"messages"`
			SystemPrompt string `json:"systemPrompt"`
			MaxTokens    int    `json:"maxTokens"`
		}
		if err := json.Unmarshal(got[0].Params, &params); err != nil {
			t.Fatal(err)
		}
		if len(params.Messages) != 1 || params.Messages[0].Role != "user" || params.Messages[0].Content.Text != "the answer?" ||
			params.SystemPrompt != "be brief" || params.MaxTokens != 50 {
			t.Errorf("params: %s", got[0].Params)
		}
		if _, got := a1.got(); len(got) != 0 {
			t.Errorf("one was asked about two's call: %+v", got)
		}

		refuse := env.Connect("refuse", &servertest.EditorOptions{
			Sample: func(context.Context, *protocol.SamplingRequest) (*protocol.SamplingResult, error) {
				return nil, jsonrpc2.NewError(-1, "the user refused to sample")
			},
		})
		r = execute(t, refuse, call("s2", "mcp__srv__sample", `{"text":"no"}`))
		if !r.IsError || !strings.Contains(r.Text(), "the user refused to sample") {
			t.Errorf("a refused sampling: %v %q", r.IsError, r.Text())
		}
		_ = one
	}, servertest.Modes(servertest.MultiModes))
}

// With stdio, the servers are told of what the editor answers; a sidecar
// that listens tells them of both, since frontends that answer may come.
func TestCapabilitiesDeclared(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
			env.Editor.AwaitStatus("srv", protocol.StateConnected)
			if r := execute(t, env.Editor, call("c", "mcp__srv__caps", `{}`)); r.Text() != `{"sampling":{}}` {
				t.Errorf("capabilities the server sees: %s", r.Text())
			}
		}, servertest.Modes(servertest.Stdio), servertest.WithEditor(servertest.EditorOptions{Sample: new(asked).sample("m", "t")}))
	})
	t.Run("listening", func(t *testing.T) {
		servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
			env.Editor.AwaitStatus("srv", protocol.StateConnected)
			r := execute(t, env.Editor, call("c", "mcp__srv__caps", `{}`))
			var caps map[string]any
			if err := json.Unmarshal([]byte(r.Text()), &caps); err != nil || caps["elicitation"] == nil || caps["sampling"] == nil {
				t.Errorf("capabilities the server sees: %s", r.Text())
			}
		}, servertest.Modes(servertest.MultiModes))
	})
}
