package server_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/server/servertest"
)

// waitForCancel is a user who never answers: the prompt stays until the
// sidecar stops waiting.
func waitForCancel(ctx context.Context, _ *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Two frontends see the same servers and the same notifications; each is
// asked only about its own calls, even while the other's prompt is open.
// Two browser tabs too.
func TestTwoFrontends(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		one := env.Editor
		two := env.Connect("two", nil)
		one.AwaitStatus("srv", protocol.StateConnected)
		two.AwaitStatus("srv", protocol.StateConnected)

		// one's prompt stays open while two calls and answers.
		one.SetAnswer(waitForCancel)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		oneDone := make(chan []protocol.ToolResult, 1)
		go func() {
			rs, _ := one.Execute(ctx, call("one-1", "mcp__srv__write", `{"text":"one"}`))
			oneDone <- rs
		}()
		one.AwaitPrompts(1)
		two.SetAnswer(servertest.Reply(protocol.AllowOnce))
		if r := execute(t, two, call("two-1", "mcp__srv__write", `{"text":"two"}`)); r.IsError || r.Decision != protocol.DecisionAsked {
			t.Errorf("two's write: %+v", r)
		}
		if p := one.Prompts(); len(p) != 1 || p[0].CallID != "one-1" {
			t.Errorf("one's prompts: %+v", p)
		}
		if p := two.Prompts(); len(p) != 1 || p[0].CallID != "two-1" {
			t.Errorf("two's prompts: %+v", p)
		}
		cancel()
		<-oneDone

		// A server's log reaches both.
		if r := execute(t, two, call("two-2", "mcp__srv__say", `{"text":"hello both"}`)); r.IsError {
			t.Fatalf("say: %+v", r)
		}
		one.AwaitLog("srv", "hello both")
		two.AwaitLog("srv", "hello both")
	}, servertest.Modes(servertest.MultiModes|servertest.WebSocket))
}

// A frontend that vanishes mid-call: its running call is cancelled (the
// server is told), its open prompt counts as deny (the tool never runs),
// and the other frontend goes on as before. A browser tab closed while its
// prompt is open likewise.
func TestFrontendVanishes(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		stay := env.Editor
		stay.AwaitStatus("srv", protocol.StateConnected)
		gone := env.Connect("gone", nil)
		gone.AwaitStatus("srv", protocol.StateConnected)

		go gone.Execute(context.Background(), call("g1", "mcp__srv__block", `{"text":"g1"}`))
		stay.AwaitLog("srv", "blocking g1")
		gone.SetAnswer(waitForCancel)
		go gone.Execute(context.Background(), call("g2", "mcp__srv__write", `{"text":"g2"}`))
		gone.AwaitPrompts(1)

		gone.Vanish()
		stay.AwaitLog("srv", "cancelled g1")
		// The sidecar is done with the frontend once its requests ended.
		env.AwaitSidecarLog(fmt.Sprintf(`msg="frontend gone" frontend=%d`, env.FrontendID(2)))
		// Had the write run, its line would come before the marker's.
		if r := execute(t, stay, call("s1", "mcp__srv__say", `{"text":"marker"}`)); r.IsError {
			t.Fatalf("say: %+v", r)
		}
		stay.AwaitLog("srv", "marker")
		for _, n := range stay.Since(0, protocol.NotifyServersLog) {
			if strings.Contains(string(n.Params), "wrote g2") {
				t.Errorf("the vanished frontend's write ran: %s", n.Params)
			}
		}
		if r := execute(t, stay, call("s2", "mcp__srv__echo", `{"text":"still here"}`)); r.IsError || r.Text() != "still here" {
			t.Errorf("the frontend that stayed: %+v", r)
		}
	}, servertest.Modes(servertest.MultiModes|servertest.WebSocket))
}

// The last frontend leaving a sidecar that listens stops nothing: the next
// one finds the same servers running.
func TestLastFrontendLeaves(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		first := env.Editor.AwaitStatus("srv", protocol.StateConnected)
		if err := env.Editor.Close(); err != nil {
			t.Fatal(err)
		}
		env.AwaitSidecarLog(fmt.Sprintf(`msg="frontend gone" frontend=%d`, env.FrontendID(1)))
		next := env.Connect("next", nil)
		st := next.AwaitStatus("srv", protocol.StateConnected)
		if st.PID != first.PID {
			t.Errorf("srv's pid went from %d to %d: it was restarted", first.PID, st.PID)
		}
	}, servertest.Modes(servertest.MultiModes|servertest.WebSocket))
}

// A sidecar that listens keeps serve.json, the user's alone, with its
// address, its pid and a 32-byte token.
func TestServeFile(t *testing.T) {
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		fi, err := os.Stat(env.Sandbox.ServeFile)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("serve.json mode %v, want 0600", fi.Mode().Perm())
		}
		sf, err := protocol.ReadServeFile(env.Sandbox.ServeFile)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := hex.DecodeString(sf.Token); err != nil || len(b) != 32 {
			t.Errorf("token %q: want 32 bytes, hex", sf.Token)
		}
		if sf.PID != env.SidecarPID() || !strings.HasPrefix(sf.Address, "unix:") {
			t.Errorf("serve.json %+v, sidecar pid %d", sf, env.SidecarPID())
		}
		// What the CLI's live commands do: find the sidecar by the file.
		c, err := frontend.DialServeFile(t.Context(), env.Sandbox.ServeFile, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Initialize(t.Context()); err != nil {
			t.Fatal(err)
		}
		if sts, err := c.Servers(t.Context()); err != nil || len(sts) != 1 {
			t.Errorf("servers through serve.json: %+v, %v", sts, err)
		}

		// The sidecar's trace (--trace) shows every message but the token:
		// up to the answer to that freecode/servers, both initializes.
		env.AwaitSidecarLog(`sidecar: [2] send {"jsonrpc":"2.0","id":2,`)
		masked := 0
		for _, line := range strings.Split(env.Log(), "\n") {
			if strings.HasPrefix(line, "sidecar: ") && strings.Contains(line, sf.Token) {
				t.Errorf("the sidecar's log shows the token: %s", line)
			}
			if strings.HasPrefix(line, "sidecar: [") && strings.Contains(line, `"token":"***"`) {
				masked++
			}
		}
		if masked != 2 {
			t.Errorf("%d initializes with the token masked in the sidecar's trace, want 2", masked)
		}
		// A second sidecar would be refused, and serve.json kept: this one answers with the
		// file's token.
		if err := server.CheckServeFile(env.Sandbox.ServeFile); err == nil || !strings.Contains(err.Error(), "another sidecar") {
			t.Errorf("CheckServeFile with a sidecar running: %v, want it refused", err)
		}
		if _, err := os.Stat(env.Sandbox.ServeFile); err != nil {
			t.Errorf("serve.json of a running sidecar: %v", err)
		}
	}, servertest.Modes(servertest.Binary))
}

// Without serve.json, DialServeFile says that no sidecar listens.
func TestDialServeFileNone(t *testing.T) {
	_, err := frontend.DialServeFile(t.Context(), t.TempDir()+"/serve.json", nil)
	if !errors.Is(err, frontend.ErrNoSidecar) {
		t.Errorf("DialServeFile without a file: %v", err)
	}
}

// A frontend that stops reading does not keep the sidecar from stopping,
// though the answers to its requests cannot be written: an answer whose
// write had begun when the sidecar began to stop would hold it forever,
// but for the cut after a grace.
func TestStalledFrontend(t *testing.T) {
	hold := make(chan struct{})
	servertest.Run(t, oneServer, func(t *testing.T, env *servertest.Env) {
		t.Cleanup(func() { close(hold) })
		ed := env.Editor
		ed.AwaitStatus("srv", protocol.StateConnected)
		stalled := env.Connect("stalled", &servertest.EditorOptions{Hold: hold})
		// Log lines it does not read fill its connection, then answers.
		if r := execute(t, ed, call("c1", "mcp__srv__say", `{"text":"fill","count":20}`)); r.IsError {
			t.Fatalf("say: %+v", r)
		}
		ed.AwaitLog("srv", "fill")
		for range 8 {
			go stalled.Servers(context.Background())
		}
		go stalled.Execute(context.Background(), call("s1", "mcp__srv__block", `{"text":"s1"}`))
		ed.AwaitLog("srv", "blocking s1")
		env.CloseSidecar()
	}, servertest.Modes(servertest.Shared))
}
