package server_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server/servertest"
)

// awaitListChanged waits for a notification of method (resources or
// prompts changed) of server with reason.
func awaitListChanged(ed *servertest.Editor, method, server, reason string) {
	ed.Await(method+" "+server, method+" "+server+" "+reason, func(n frontend.Notification) bool {
		var lc protocol.ListChanged
		return n.Method == method && json.Unmarshal(n.Params, &lc) == nil && lc.Server == server && lc.Reason == reason
	})
}

// A server's resources and prompts are listed, read and got through the
// sidecar; a change of either is told (resources/prompts changed) and the
// next list has it.
func TestResourcesAndPrompts(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		awaitListChanged(ed, protocol.NotifyResourcesChanged, "srv", "connected")
		awaitListChanged(ed, protocol.NotifyPromptsChanged, "srv", "connected")

		hello := protocol.ResourceInfo{Server: "srv", URI: "test://hello", Name: "hello", MIMEType: "text/plain", Description: "a test resource"}
		for _, server := range []string{"srv", ""} {
			res, err := ed.Resources(t.Context(), server)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]protocol.ResourceInfo{hello}, res); diff != "" {
				t.Errorf("resources of %q (-want +got):\n%s", server, diff)
			}
		}
		rr, err := ed.ReadResource(t.Context(), "srv", "test://hello")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: "test://hello", MIMEType: "text/plain", Text: "hello from servertest"}}}, rr); diff != "" {
			t.Errorf("read (-want +got):\n%s", diff)
		}

		prompts, err := ed.Client.Prompts(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		greet := protocol.PromptInfo{Server: "srv", Name: "greet", Title: "Greet", Description: "Greet someone",
			Arguments: []protocol.PromptArgument{{Name: "who", Description: "whom to greet", Required: true}}}
		if diff := cmp.Diff([]protocol.PromptInfo{greet}, prompts); diff != "" {
			t.Errorf("prompts (-want +got):\n%s", diff)
		}
		gp, err := ed.GetPrompt(t.Context(), "srv", "greet", map[string]string{"who": "Ada"})
		if err != nil {
			t.Fatal(err)
		}
		if len(gp.Messages) != 1 || gp.Messages[0].Role != "user" || string(gp.Messages[0].Content) != `{"type":"text","text":"Hello, Ada!"}` || gp.Description != "a greeting" {
			t.Errorf("get greet: %+v %s", gp, gp.Messages[0].Content)
		}

		ed.SetAnswer(servertest.Reply(protocol.AllowOnce))
		if r := execute(t, ed, call("a1", "mcp__srv__addresource", `{"name":"more"}`)); r.IsError {
			t.Fatalf("addresource: %s", r.Text())
		}
		awaitListChanged(ed, protocol.NotifyResourcesChanged, "srv", "listChanged")
		res, err := ed.Resources(t.Context(), "srv")
		if err != nil || len(res) != 2 || res[1].URI != "test://more" {
			t.Errorf("resources after list_changed: %+v, %v", res, err)
		}
		if r := execute(t, ed, call("a2", "mcp__srv__addprompt", `{"name":"extra"}`)); r.IsError {
			t.Fatalf("addprompt: %s", r.Text())
		}
		awaitListChanged(ed, protocol.NotifyPromptsChanged, "srv", "listChanged")
		if prompts, err := ed.Client.Prompts(t.Context(), "srv"); err != nil || len(prompts) != 2 {
			t.Errorf("prompts after list_changed: %+v, %v", prompts, err)
		}

		if _, err := env.Editor.StopServer(t.Context(), "srv"); err != nil {
			t.Fatal(err)
		}
		awaitListChanged(ed, protocol.NotifyResourcesChanged, "srv", "stopped")
	})
}

// The errors of resources and prompts: a missing field is -32602, an
// unknown server -32001.
func TestResourcesErrors(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		for _, tc := range []struct {
			what string
			err  error
			want int64
		}{
			{"resources of an unknown server", second(ed.Resources(t.Context(), "nope")), int64(protocol.CodeNoSuchServer)},
			{"prompts of an unknown server", second(ed.Client.Prompts(t.Context(), "nope")), int64(protocol.CodeNoSuchServer)},
			{"read without a uri", second(ed.ReadResource(t.Context(), "srv", "")), int64(protocol.CodeInvalidParams)},
			{"read without a server", second(ed.ReadResource(t.Context(), "", "test://hello")), int64(protocol.CodeInvalidParams)},
			{"read of an unknown server", second(ed.ReadResource(t.Context(), "nope", "test://hello")), int64(protocol.CodeNoSuchServer)},
			{"get without a name", second(ed.GetPrompt(t.Context(), "srv", "", nil)), int64(protocol.CodeInvalidParams)},
			{"get of an unknown server", second(ed.GetPrompt(t.Context(), "nope", "greet", nil)), int64(protocol.CodeNoSuchServer)},
		} {
			if got := int64(codeOf(tc.err)); got != tc.want {
				t.Errorf("%s: %v, want code %d", tc.what, tc.err, tc.want)
			}
		}
		// The server's own error reaches the frontend.
		if _, err := ed.GetPrompt(t.Context(), "srv", "greet", nil); err == nil {
			t.Errorf("greet without its argument: no error")
		}
	})
}

// second returns the error of a call's results.
func second[T any](_ T, err error) error { return err }
