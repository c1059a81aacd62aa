package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/termtext"
)

// session is the scripted session: what it prints, the notifications it
// awaits and the answers it gives to permission prompts.
type session struct {
	server, add string
	notes       *notes

	// mu guards the fields below: the permission handler runs on a
	// goroutine of the Client's.
	mu      sync.Mutex
	out     io.Writer
	answers []protocol.PermissionDecision // the next prompts' answers, in order
}

func newSession(out io.Writer, server, add string) *session {
	return &session{server: server, add: add, out: out, notes: newNotes()}
}

// printf prints a line of the session.
func (s *session) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.out, format+"\n", args...)
}

// step prints the head of a step: its title and what it shows.
func (s *session) step(n int, title, what string) {
	s.printf("\n== %d. %s\n%s", n, title, what)
}

// answer is the Client's permission handler: it prints the prompt and
// gives the next scripted answer (deny when the script gave none).
func (s *session) answer(_ context.Context, req *protocol.PermissionRequest) (*protocol.PermissionResponse, error) {
	s.mu.Lock()
	d := protocol.Deny
	if len(s.answers) > 0 {
		d, s.answers = s.answers[0], s.answers[1:]
	}
	s.mu.Unlock()
	s.printf("← %s  %s: %s %s\n     reason: %s (projectTrusted: %t)",
		protocol.MethodPermissionRequest, req.CallID, req.Tool, compact(req.Arguments), termtext.Escape(req.Reason), req.ProjectTrusted)
	s.printf("→ answer  %s", d)
	return &protocol.PermissionResponse{Decision: d}, nil
}

// run runs the script on c. owns says the session started the sidecar,
// and so shuts it down at the end.
func (s *session) run(ctx context.Context, c *frontend.Client, owns bool) error {
	what := "The frontend names itself and its workspace folders (the MCP roots); the sidecar\nanswers with its version. Servers start connecting after `initialized`."
	if !owns {
		what = "The frontend presents the token from serve.json (a listening sidecar serves only\nthe user's own programs). Its servers run already: their statuses come right after."
	}
	s.step(1, "initialize", what)
	s.printf("→ %s, %s", protocol.MethodInitialize, protocol.MethodInitialized)
	init, err := c.Initialize(ctx)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	s.printf("← serverInfo %s %s, frontend protocol %d", init.ServerInfo.Name, init.ServerInfo.Version, init.Capabilities.Experimental.FreeCode.ProtocolVersion)
	// initialized has opened the workspace: the config's servers are
	// known, if not connected yet.
	servers, err := c.Servers(ctx)
	if err != nil {
		return err
	}
	demo := slices.IndexFunc(servers, func(st protocol.ServerStatus) bool { return st.Name == s.server })
	if demo < 0 || len(servers[demo].Command) == 0 {
		return fmt.Errorf("the config has no local server %q: add the demo server (examples/demo-server) under that name", s.server)
	}
	command := servers[demo].Command
	st, err := s.notes.awaitStatus(ctx, 0, s.server)
	if err != nil {
		return err
	}
	s.printf("← %s  %s: %s, %d tools", protocol.NotifyServersStatus, st.Name, st.State, st.ToolCount)

	s.step(2, "freecode/servers", "Every configured server and its state.")
	if servers, err = c.Servers(ctx); err != nil {
		return err
	}
	s.printServers(servers)

	s.step(3, "freecode/tools", "The tools as the orchestrator registers them: mcp__<server>__<tool>.\nR read-only (runs without asking, in parallel), D destructive (asks).")
	tools, err := c.Tools(ctx, "")
	if err != nil {
		return err
	}
	s.printTools(tools)

	s.step(4, "freecode/tools/definitions", "The exact tools array a provider gets, and its hash: while the hash stays the same,\nthe provider's prompt cache stays warm.")
	if err := s.definitions(ctx, c); err != nil {
		return err
	}

	s.step(5, "freecode/tools/execute: a read-only batch", "Three read-only calls in one batch: no rule needed, they run side by side,\nand the results come back in the order of the calls.")
	p := "mcp__" + s.server + "__"
	if err := s.execute(ctx, c,
		protocol.ToolCall{CallID: "c1", Tool: p + "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
		protocol.ToolCall{CallID: "c2", Tool: p + "search", Arguments: json.RawMessage(`{"query":"Hello("}`)},
		protocol.ToolCall{CallID: "c3", Tool: p + "list_files", Arguments: json.RawMessage(`{"recursive":true}`)},
	); err != nil {
		return err
	}

	s.step(6, "freecode/tools/execute: destructive calls", "A destructive tool with no rule asks the frontend that sent the batch; calls\nthat are not read-only run one at a time. The script allows the first once\nand denies the second.")
	s.mu.Lock()
	s.answers = []protocol.PermissionDecision{protocol.AllowOnce, protocol.Deny}
	s.mu.Unlock()
	if err := s.execute(ctx, c,
		protocol.ToolCall{CallID: "c4", Tool: p + "delete_file", Arguments: json.RawMessage(`{"path":"docs/notes.md"}`)},
		protocol.ToolCall{CallID: "c5", Tool: p + "delete_file", Arguments: json.RawMessage(`{"path":"README.md"}`)},
	); err != nil {
		return err
	}

	if err := s.editConfig(ctx, c, command); err != nil {
		return err
	}

	if owns {
		s.step(8, "shutdown, exit", "The sidecar stops every MCP server, reaps their processes and exits.")
		s.printf("→ %s", protocol.MethodShutdown)
		if err := c.Shutdown(ctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		s.printf("→ %s", protocol.MethodExit)
		if err := c.Exit(ctx); err != nil {
			return fmt.Errorf("exit: %w", err)
		}
	}
	return nil
}

// editConfig adds the demo server under another name to the config file,
// as a user's edit would, and prints the notifications that follow.
func (s *session) editConfig(ctx context.Context, c *frontend.Client, command []string) error {
	s.step(7, "a config edit", fmt.Sprintf("The config file is edited while the sidecar runs: the demo server again, as %q.\nThe sidecar notices, starts it, and tells every frontend; the tools array\nchanged, so its hash did too.", s.add))
	proj, err := c.Project(ctx)
	if err != nil {
		return err
	}
	mark := s.notes.mark()
	// The demo server names itself after --name in initialize.
	srv := config.Server{Name: s.add, Type: config.TypeLocal, Enabled: true, Command: append(slices.Clip(command), "--name", "freecode-"+s.add)}
	s.printf("✎ %s: mcp.servers += %s %s", proj.ConfigPath, s.add, termtext.Escape(strings.Join(srv.Command, " ")))
	if err := config.AddServer(proj.ConfigPath, srv.WithDefaults()); err != nil {
		return fmt.Errorf("editing the config: %w (is there a server %q already? pick another with --add)", err, s.add)
	}
	st, err := s.notes.awaitStatus(ctx, mark, s.add)
	if err != nil {
		return err
	}
	info := ""
	if st.ServerInfo != nil {
		info = ", serverInfo " + st.ServerInfo.Name
	}
	s.printf("← %s  %s: %s, %d tools%s", protocol.NotifyServersStatus, st.Name, st.State, st.ToolCount, termtext.Escape(info))
	defs, err := c.Definitions(ctx, protocol.FormatAnthropic)
	if err != nil {
		return err
	}
	tc, err := s.notes.awaitToolsChanged(ctx, mark, defs.Hash)
	if err != nil {
		return err
	}
	s.printf("← %s  server %s, reason %s\n     anthropic %s, openai %s", protocol.NotifyToolsChanged, tc.Server, tc.Reason, short(tc.Hashes.Anthropic), short(tc.Hashes.OpenAI))
	s.printf("→ %s", protocol.MethodToolsDefinitions)
	n, err := count(defs.Tools)
	if err != nil {
		return err
	}
	s.printf("← anthropic: %d tools, hash %s: the one the notification named", n, short(defs.Hash))
	return nil
}

// definitions prints both providers' arrays' sizes and hashes.
func (s *session) definitions(ctx context.Context, c *frontend.Client) error {
	for _, f := range []protocol.Format{protocol.FormatAnthropic, protocol.FormatOpenAI} {
		defs, err := c.Definitions(ctx, f)
		if err != nil {
			return err
		}
		n, err := count(defs.Tools)
		if err != nil {
			return err
		}
		head := defs.Tools
		if len(head) > 90 {
			head = append(slices.Clip(head[:90]), "…"...)
		}
		s.printf("← %-9s %d tools, hash %s\n     %s", f+":", n, short(defs.Hash), termtext.Escape(string(head)))
	}
	return nil
}

// execute runs a batch and prints each call and its result.
func (s *session) execute(ctx context.Context, c *frontend.Client, calls ...protocol.ToolCall) error {
	for _, call := range calls {
		s.printf("→ %s  %s %s", call.CallID, call.Tool, compact(call.Arguments))
	}
	results, err := c.Execute(ctx, calls...)
	if err != nil {
		return fmt.Errorf("execute: %w", err)
	}
	for _, r := range results {
		lines := strings.Split(strings.TrimRight(r.Text(), "\n"), "\n")
		more := ""
		if len(lines) > 3 {
			lines, more = lines[:3], fmt.Sprintf("\n     … %d more lines", len(lines)-3)
		}
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(strings.TrimRight("\n     "+termtext.Escape(l), " "))
		}
		errMark := ""
		if r.IsError {
			errMark = ", error"
		}
		s.printf("← %s  %s%s:%s%s", r.CallID, r.Decision, errMark, b.String(), more)
	}
	return nil
}

func (s *session) printServers(servers []protocol.ServerStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "   NAME\tSTATE\tTOOLS\tTRANSPORT\tPROTOCOL")
	for _, st := range servers {
		fmt.Fprintf(tw, "   %s\t%s\t%d\t%s\t%s\n", termtext.Escape(st.Name), st.State, st.ToolCount, st.Transport, termtext.Escape(st.ProtocolVersion))
	}
	tw.Flush()
}

func (s *session) printTools(tools []protocol.ToolInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	for _, t := range tools {
		mark := "-"
		switch {
		case t.ReadOnly:
			mark = "R"
		case t.Destructive != nil && *t.Destructive:
			mark = "D"
		}
		fmt.Fprintf(tw, "   %s\t%s\n", termtext.Escape(t.ID), mark)
	}
	tw.Flush()
}

// compact returns JSON on one line, escaped for the terminal.
func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return termtext.Escape(string(raw))
	}
	b, _ := json.Marshal(v)
	return termtext.Escape(string(b))
}

// short is the head of a hash: enough to tell two apart.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12] + "…"
	}
	return hash
}

// count returns the length of a JSON array.
func count(raw json.RawMessage) (int, error) {
	var tools []json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return 0, fmt.Errorf("the definitions are not an array: %w", err)
	}
	return len(tools), nil
}
