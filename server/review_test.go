package server_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
	"github.com/freecode/freecode/workspace"
)

// repin makes the accepted definitions of server a as edit says: what the
// user would have accepted before the server changed them.
func repin(t *testing.T, env *servertest.Env, server string, edit func(pins map[string]*manifest.Pin)) {
	t.Helper()
	cfg, err := config.Load(env.Sandbox.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	srv, ok := cfg.Server(server)
	if !ok {
		t.Fatalf("no server %q", server)
	}
	store := manifest.NewStore(filepath.Join(env.Sandbox.ConfigDir, workspace.ManifestDir), nil)
	if _, err := store.Update(t.Context(), config.ManifestKey(env.Sandbox.Project, srv), func(m *manifest.Manifest, corrupt error) error {
		if corrupt != nil || !m.Pinned {
			return errors.New("no manifest to repin")
		}
		edit(m.Pins)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A server whose tools changed since they were accepted: the frontend is
// told which, sees the accepted definitions, is asked before each call
// with the change, and accepts (in the prompt, or by freecode/tools/review
// with the hash it was shown) or rejects.
func TestToolsReview(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}]}}
-- settings.json --
{"permissions": {"allow": ["mcp__a"]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("a", protocol.StateConnected)
		repin(t, env, "a", func(pins map[string]*manifest.Pin) {
			pins["write"].Def.Description = "Pretend to write, politely."
			pins["echo"].Def.Annotations.ReadOnly = false
		})
		if _, err := ed.RestartServer(t.Context(), "a"); err != nil {
			t.Fatal(err)
		}
		rn := ed.AwaitReviews("a", func(rn protocol.ReviewNeeded) bool { return len(rn.Reviews) == 2 })
		for _, r := range rn.Reviews {
			if r.Kind != protocol.ReviewChanged || r.ID != "mcp__a__"+r.Tool || len(r.Hash) != 64 || r.Diff == "" {
				t.Errorf("review: %+v", r)
			}
		}
		tools, err := ed.Tools(t.Context(), "a")
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range tools {
			switch ti.Name {
			case "write":
				if ti.Description != "Pretend to write, politely." || !ti.DefinitionChanged {
					t.Errorf("write listed as %+v", ti)
				}
			case "echo":
				if ti.ReadOnly || !ti.DefinitionChanged {
					t.Errorf("echo listed as read-only=%v changed=%v: its flip took effect", ti.ReadOnly, ti.DefinitionChanged)
				}
			default:
				if ti.DefinitionChanged || ti.New {
					t.Errorf("%s listed as changed", ti.Name)
				}
			}
		}

		// The allow rule does not spare the prompt; the prompt shows the
		// change and accepting there re-pins.
		ed.SetAnswer(func(_ context.Context, req *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
			return &protocol.PermissionResponse{Decision: protocol.AllowOnce, AcceptDefinition: true}, nil
		})
		if r := execute(t, ed, call("w1", "mcp__a__write", `{"text":"x"}`)); r.IsError || r.Decision != protocol.DecisionAsked {
			t.Fatalf("write: %+v", r)
		}
		prompts := ed.Prompts()
		if len(prompts) != 1 || prompts[0].Review == nil || prompts[0].Review.Kind != protocol.ReviewChanged ||
			prompts[0].Review.Change.Description == nil || !strings.Contains(prompts[0].Review.Diff, "[-, politely.-]") {
			t.Fatalf("the prompt: %+v", prompts)
		}
		ed.AwaitReviews("a", func(rn protocol.ReviewNeeded) bool { return len(rn.Reviews) == 1 })
		if r := execute(t, ed, call("w2", "mcp__a__write", `{"text":"x"}`)); r.Decision != protocol.DecisionAllowed {
			t.Errorf("write after acceptance: %+v", r)
		}

		// freecode/tools/review: the diff, a stale hash refused, the one
		// shown accepted.
		diff, err := ed.ReviewTools(t.Context(), protocol.ReviewParams{Server: "a", Action: protocol.ReviewDiff})
		if err != nil || len(diff) != 1 || diff[0].Tool != "echo" || len(diff[0].Change.Annotations) != 1 ||
			diff[0].Change.Annotations[0].Hint != "readOnlyHint" || string(diff[0].Change.Annotations[0].New) != "true" {
			t.Fatalf("diff: %+v, %v", diff, err)
		}
		_, err = ed.ReviewTools(t.Context(), protocol.ReviewParams{Server: "a", Tool: "echo", Action: protocol.ReviewAccept, Hash: strings.Repeat("0", 64)})
		var je *jsonrpc2.Error
		if !errors.As(err, &je) || je.Code != protocol.CodeInvalidParams || !strings.Contains(je.Message, "hash") {
			t.Errorf("accepting a hash not shown: %v", err)
		}
		left, err := ed.ReviewTools(t.Context(), protocol.ReviewParams{Server: "a", Tool: "echo", Action: protocol.ReviewAccept, Hash: diff[0].Hash})
		if err != nil || len(left) != 0 {
			t.Fatalf("accept: %+v, %v", left, err)
		}
		ed.AwaitReviews("a", func(rn protocol.ReviewNeeded) bool { return len(rn.Reviews) == 0 })
		if tools, _ := ed.Tools(t.Context(), "a"); !readOnly(tools, "echo") {
			t.Error("echo is not read-only once its flip was accepted")
		}

		// A new tool is marked new; rejecting it denies its calls unasked.
		if r := execute(t, ed, call("n1", "mcp__a__addtool", `{"name":"fresh"}`)); r.IsError {
			t.Fatalf("addtool: %+v", r)
		}
		rn = ed.AwaitReviews("a", func(rn protocol.ReviewNeeded) bool { return len(rn.Reviews) == 1 })
		if r := rn.Reviews[0]; r.Tool != "fresh" || r.Kind != protocol.ReviewNew {
			t.Fatalf("the new tool's review: %+v", r)
		}
		if _, err := ed.ReviewTools(t.Context(), protocol.ReviewParams{Server: "a", Tool: "fresh", Action: protocol.ReviewReject}); err != nil {
			t.Fatal(err)
		}
		before := len(ed.Prompts())
		if r := execute(t, ed, call("n2", "mcp__a__fresh", `{}`)); r.Decision != protocol.DecisionDenied || !strings.Contains(r.Text(), "rejected") {
			t.Errorf("fresh after rejection: %+v", r)
		}
		if len(ed.Prompts()) != before {
			t.Error("a rejected definition was asked about")
		}

		for _, tc := range []struct {
			p    protocol.ReviewParams
			code jsonrpc2.Code
		}{
			{protocol.ReviewParams{Action: protocol.ReviewDiff}, protocol.CodeInvalidParams},
			{protocol.ReviewParams{Server: "a"}, protocol.CodeInvalidParams},
			{protocol.ReviewParams{Server: "a", Action: "approve"}, protocol.CodeInvalidParams},
			{protocol.ReviewParams{Server: "nope", Action: protocol.ReviewDiff}, protocol.CodeNoSuchServer},
			{protocol.ReviewParams{Server: "a", Tool: "nope", Action: protocol.ReviewAccept}, protocol.CodeNoSuchServer},
			{protocol.ReviewParams{Server: "a", Tool: "echo", Action: protocol.ReviewReject}, protocol.CodeInvalidParams},
		} {
			_, err := ed.ReviewTools(t.Context(), tc.p)
			if !errors.As(err, &je) || je.Code != tc.code {
				t.Errorf("%+v: %v, want code %d", tc.p, err, tc.code)
			}
		}
	})
}

func readOnly(tools []protocol.ToolInfo, name string) bool {
	for _, ti := range tools {
		if ti.Name == name {
			return ti.ReadOnly
		}
	}
	return false
}

// A frontend that connects while tools await review is told so at once.
func TestReviewsOfLateFrontend(t *testing.T) {
	servertest.Run(t, `
-- config.json --
{"mcp": {"servers": [{{server "a"}}]}}
`, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("a", protocol.StateConnected)
		repin(t, env, "a", func(pins map[string]*manifest.Pin) {
			pins["write"].Def.Description = "Pretend to write, politely."
		})
		if _, err := ed.RestartServer(t.Context(), "a"); err != nil {
			t.Fatal(err)
		}
		ed.AwaitReviews("a", func(rn protocol.ReviewNeeded) bool { return len(rn.Reviews) == 1 })
		late := env.Connect("late", nil)
		rn := late.AwaitReviews("a", nil)
		if len(rn.Reviews) != 1 || rn.Reviews[0].Tool != "write" {
			t.Errorf("the late frontend's reviews: %+v", rn)
		}
	}, servertest.Modes(servertest.MultiModes))
}
