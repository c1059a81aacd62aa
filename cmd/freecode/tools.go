package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/permissions"
)

func init() { subcommands = append(subcommands, newToolsCmd) }

// newToolsCmd is `freecode tools`: the orchestrator on its own, over the
// servers of the config file, without a sidecar.
func newToolsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List, describe and call tools through FreeCode's orchestrator",
		Long: `Connect the enabled MCP servers of the config file (and the project's approved
ones), then list their tools under FreeCode's tool ids, print the definitions a
provider receives, or run one call through the orchestrator: argument
validation, permission rules, timeout and result cap, as the sidecar does.`,
	}
	var project string
	cmd.PersistentFlags().StringVar(&project, "project", "", "project directory for project servers and rules (default: the current directory)")
	cmd.AddCommand(newToolsListCmd(a, &project), newToolsDefsCmd(a, &project), newToolsCallCmd(a, &project))
	return cmd
}

// toolsEnv is the config, the connected servers and the registry of one
// `freecode tools` command.
type toolsEnv struct {
	cfg        *config.Config
	configPath string
	projectDir string
	servers    []config.Server // the servers it tried to connect
	pending    []string        // project servers awaiting the user's approval
	mgr        *mcp.Manager
	reg        *orchestrator.Registry

	mu     sync.Mutex
	failed map[string]string // server → last error
}

// connectTools loads the config and connects the servers for which want
// returns true (nil: every enabled one), waiting for each to connect or
// fail within its own timeout. Close the env's Manager when done.
func (a *app) connectTools(ctx context.Context, project string, want func(string) bool) (*toolsEnv, error) {
	cfg, path, err := a.load()
	if err != nil {
		return nil, err
	}
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	if project, err = filepath.Abs(project); err != nil {
		return nil, err
	}
	e := &toolsEnv{cfg: cfg, configPath: path, projectDir: project, reg: orchestrator.NewRegistry(nil), failed: map[string]string{}}
	servers := slices.Clone(cfg.MCP.Servers)
	projServers, err := config.LoadProject(project)
	if err != nil {
		return nil, fmt.Errorf("project servers: %w", err)
	}
	for _, s := range projServers {
		if _, clash := cfg.Server(s.Name); clash {
			continue
		}
		if cfg.Approved(config.ApprovalKey(project, s)) {
			servers = append(servers, s)
		} else {
			e.pending = append(e.pending, s.Name)
		}
	}
	for _, s := range servers {
		if s.Enabled && (want == nil || want(s.Name)) {
			e.servers = append(e.servers, s)
		}
	}

	// Sends never block: events after the wait below are not needed.
	settled := make(chan string, 2*len(e.servers)+4)
	settle := func(name string) {
		select {
		case settled <- name:
		default:
		}
	}
	var mgr *mcp.Manager
	mgr = mcp.NewManager(&mcp.ManagerOptions{
		OnToolsChanged: func(ev mcp.ToolsChanged) {
			e.reg.HandleToolsChanged(ev, mgr)
			if ev.Tools != nil {
				settle(ev.Server)
			}
		},
		OnStatus: func(st mcp.Status) {
			if st.State == mcp.StateFailed || st.State == mcp.StateStopped {
				e.mu.Lock()
				e.failed[st.Name] = st.LastError
				e.mu.Unlock()
				settle(st.Name)
			}
		},
	})
	e.mgr = mgr
	mgr.Apply(ctx, e.servers)

	// Wait for every server to settle: its timeout bounds its connect, the
	// grace covers process start-up and reaping.
	var longest time.Duration
	for _, s := range e.servers {
		longest = max(longest, s.Timeout)
	}
	deadline := time.NewTimer(longest + 2*time.Second)
	defer deadline.Stop()
	pending := map[string]bool{}
	for _, s := range e.servers {
		pending[s.Name] = true
	}
	for len(pending) > 0 {
		select {
		case name := <-settled:
			delete(pending, name)
		case <-deadline.C:
			for name := range pending {
				e.mu.Lock()
				e.failed[name] = "did not connect in time"
				e.mu.Unlock()
			}
			pending = nil
		case <-ctx.Done():
			mgr.Close()
			return nil, ctx.Err()
		}
	}
	return e, nil
}

// reportFailures prints one line per server that did not connect and
// returns how many there were.
func (e *toolsEnv) reportFailures(w io.Writer) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, s := range e.servers {
		if msg, ok := e.failed[s.Name]; ok {
			fmt.Fprintf(w, "✗ Server %q failed: %s\n", s.Name, strings.TrimPrefix(msg, "starting "+s.Name+": "))
			n++
		}
	}
	return n
}

func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}

func newToolsListCmd(a *app, project *string) *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Connect the enabled servers and list their tools by id",
		Long: `Connect the enabled servers and list their tools by the ids permission rules
match (mcp__<server>__<tool>). Marks: R read-only (runs in parallel, allowed
unless a rule says otherwise), D destructive, - neither; an alias is the name
providers see when the id is longer than 64 characters.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signalContext(cmd)
			defer stop()
			var want func(string) bool
			if server != "" {
				want = func(s string) bool { return s == server }
			}
			e, err := a.connectTools(ctx, *project, want)
			if err != nil {
				return err
			}
			defer e.mgr.Close()
			if server != "" && len(e.servers) == 0 {
				return fmt.Errorf("no enabled server named %q", server)
			}
			failed := e.reportFailures(cmd.ErrOrStderr())
			infos := e.reg.Infos(server)
			out := cmd.OutOrStdout()
			if asJSON {
				if infos == nil {
					infos = []orchestrator.ToolInfo{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(infos); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, t := range infos {
					alias := ""
					if t.Alias != "" {
						alias = "alias " + t.Alias
					}
					// No empty last cell: it would pad every line with spaces.
					fmt.Fprintf(tw, "%s\t%s\t%s", t.ID, infoMark(t), firstLine(t.Description, 80))
					if alias != "" {
						fmt.Fprintf(tw, "\t%s", alias)
					}
					fmt.Fprintln(tw)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%d %s from %d %s\n", len(infos), plural(len(infos), "tool", "tools"),
					len(e.servers)-failed, plural(len(e.servers)-failed, "server", "servers"))
			}
			if len(e.pending) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %d project %s awaiting your approval (%s): see `freecode mcp approve --project %s`\n",
					len(e.pending), plural(len(e.pending), "server", "servers"), strings.Join(e.pending, ", "), e.projectDir)
			}
			if failed > 0 && server != "" {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "connect and list only this server")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print ToolInfo objects as JSON")
	return cmd
}

func infoMark(t orchestrator.ToolInfo) string {
	switch {
	case t.ReadOnly:
		return "R"
	case t.Destructive != nil && *t.Destructive:
		return "D"
	}
	return "-"
}

func newToolsDefsCmd(a *app, project *string) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "defs",
		Short: "Print the tools array a provider receives, and its hash",
		Long: `Print the exact tools array FreeCode sends to a provider (stdout) and its
content hash (stderr). Tools whose schema cannot be converted are left out
and reported on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := defscache.Format(format)
			if f != defscache.FormatAnthropic && f != defscache.FormatOpenAI {
				return fmt.Errorf("--format must be anthropic or openai, not %q", format)
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			e, err := a.connectTools(ctx, *project, nil)
			if err != nil {
				return err
			}
			defer e.mgr.Close()
			stderr := cmd.ErrOrStderr()
			e.reportFailures(stderr)
			src := orchestrator.DefsSource(e.reg, &orchestrator.DefsOptions{OnProblem: func(p orchestrator.DefsProblem) {
				what := "warning"
				if p.Dropped {
					what = "left out"
				}
				fmt.Fprintf(stderr, "%s: %s: %s\n", p.ToolID, what, p.Message)
			}})
			entry, err := defscache.New(src, &defscache.Options{Formats: []defscache.Format{f}}).Get(ctx, f)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if _, err := out.Write(entry.Bytes); err != nil {
				return err
			}
			fmt.Fprintln(out)
			fmt.Fprintf(stderr, "%s: %d %s, hash %s\n", f, entry.Count, plural(entry.Count, "tool", "tools"), entry.Hash)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", string(defscache.FormatAnthropic), "provider format: anthropic or openai")
	return cmd
}

// isTerminal reports whether r is an interactive terminal; a variable so
// that tests can answer prompts through a pipe.
var isTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && ttyFd(f.Fd())
}

func newToolsCallCmd(a *app, project *string) *cobra.Command {
	var argsJSON string
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "call <tool-id> [--args '<json>']",
		Short: "Run one tool call through the orchestrator",
		Long: `Run one tool call the way the sidecar does: the arguments are validated against
the tool's schema, the permission rules of ~/.freecode/settings.json and the
project's files apply, and the server's toolTimeout bounds the call.

When a rule asks for permission, a terminal gets a y/N/always prompt; without a
terminal the call is denied (the message names the rule to add) unless --yes
allows it once. Exit status 1 when the result is an error.`,
		Example: `  freecode tools call mcp__demo__read_file --args '{"path":"README.md"}'
  freecode tools call mcp__demo__delete_file --args '{"path":"old.txt"}' --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if !json.Valid([]byte(argsJSON)) {
				return fmt.Errorf("--args is not valid JSON: %s", argsJSON)
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			e, err := a.connectTools(ctx, *project, serverOf(id))
			if err != nil {
				return err
			}
			defer e.mgr.Close()
			stderr := cmd.ErrOrStderr()
			e.reportFailures(stderr)

			userDir := filepath.Dir(e.configPath)
			set, warnings, err := permissions.Load(permissions.LoadOptions{
				UserFile:   filepath.Join(userDir, permissions.SettingsFile),
				ProjectDir: e.projectDir,
				Trusted:    e.cfg.IsTrusted(e.projectDir),
			})
			if err != nil {
				return err
			}
			for _, w := range warnings {
				fmt.Fprintf(stderr, "note: %s:%d:%d: %s\n", w.Path, w.Line, w.Col, w.Msg)
			}
			o := orchestrator.New(e.reg, &orchestrator.Options{
				Permissions:    set,
				UserDir:        userDir,
				ProjectDir:     e.projectDir,
				MaxResultChars: e.cfg.MCP.MaxResultChars,
			})
			trusted := set.ProjectTrusted()
			var approver orchestrator.Approver
			switch {
			case yes:
				approver = orchestrator.ApproverFunc(func(context.Context, orchestrator.Request) (orchestrator.Answer, error) {
					return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
				})
			case isTerminal(cmd.InOrStdin()):
				approver = &promptApprover{in: bufio.NewReader(cmd.InOrStdin()), out: stderr, projectTrusted: trusted}
			}
			rs := o.Execute(ctx, []orchestrator.ToolCall{{CallID: "cli-1", Tool: id, Arguments: json.RawMessage(argsJSON)}}, &orchestrator.ExecOptions{
				Approver: approver,
				OnProgress: func(_ string, p orchestrator.Progress) {
					fmt.Fprintf(stderr, "progress: %s\n", progressText(p))
				},
				OnWarning: func(_ string, msg string) {
					fmt.Fprintf(stderr, "warning: %s\n", msg)
				},
			})
			r := rs[0]
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				printResult(out, &r)
			}
			if r.IsError {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "{}", "the call's arguments, a JSON object")
	cmd.Flags().BoolVar(&yes, "yes", false, "allow the call once if a rule would ask")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole ToolResult as JSON")
	return cmd
}

// serverOf returns the filter of servers a call of id needs: the server an
// MCP id (or alias) names, or nil (all) for anything else. A server name
// never contains "__", so it ends at the first "__" after "mcp__"; an alias
// may have lost that separator to truncation, so a prefix also counts.
func serverOf(id string) func(string) bool {
	rest, ok := strings.CutPrefix(id, orchestrator.MCPPrefix)
	if !ok {
		return func(string) bool { return false } // built-ins need no server
	}
	if i := strings.Index(rest, "__"); i >= 0 {
		srv := rest[:i]
		return func(s string) bool { return s == srv }
	}
	return func(s string) bool { return strings.HasPrefix(rest, s) }
}

func progressText(p orchestrator.Progress) string {
	s := fmt.Sprint(p.Progress)
	if p.Total > 0 {
		s += "/" + fmt.Sprint(p.Total)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

// printResult prints a result for a person: text as it is, other content
// described in one line, structured content as JSON when there is no text.
func printResult(w io.Writer, r *orchestrator.ToolResult) {
	if r.IsError {
		fmt.Fprintf(w, "✗ error (%s, %d ms):\n", r.Decision, r.DurationMs)
	}
	hasText := false
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcpsdk.TextContent:
			hasText = true
			fmt.Fprintln(w, c.Text)
		case *mcpsdk.ImageContent:
			fmt.Fprintf(w, "[image %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcpsdk.AudioContent:
			fmt.Fprintf(w, "[audio %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcpsdk.ResourceLink:
			fmt.Fprintf(w, "[resource link %s]\n", c.URI)
		case *mcpsdk.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(w, "[resource %s]\n", c.Resource.URI)
			}
		default:
			b, _ := json.Marshal(c)
			fmt.Fprintf(w, "%s\n", b)
		}
	}
	if r.StructuredContent != nil && !hasText {
		b, err := json.MarshalIndent(r.StructuredContent, "", "  ")
		if err == nil {
			fmt.Fprintf(w, "%s\n", b)
		}
	}
}

// promptApprover asks on the terminal: y allows once, "always" (or a)
// writes an allow rule to ~/.freecode/settings.json, "local" (or l) to the
// project's settings.local.json; anything else denies. "local" is offered
// only in a trusted project: an untrusted project's allow rules are
// ignored, so the rule would not hold beyond this call.
type promptApprover struct {
	in             *bufio.Reader
	out            io.Writer
	projectTrusted bool
}

var _ orchestrator.Approver = (*promptApprover)(nil)

func (p *promptApprover) Approve(ctx context.Context, req orchestrator.Request) (orchestrator.Answer, error) {
	kind := "destructive or unannotated"
	if req.ReadOnly {
		kind = "read-only"
	}
	fmt.Fprintf(p.out, "%s (%s) wants to run with %s\n  why asked: %s\n", req.Tool, kind, req.Arguments, req.Reason)
	if p.projectTrusted {
		fmt.Fprint(p.out, "Allow? [y]es once / [N]o / [a]lways (user settings) / always for this project ([l]ocal): ")
	} else {
		fmt.Fprint(p.out, "  (always for this project only: this project is not trusted; run `freecode trust` first)\n")
		fmt.Fprint(p.out, "Allow? [y]es once / [N]o / [a]lways (user settings): ")
	}
	type line struct {
		s   string
		err error
	}
	ch := make(chan line, 1)
	go func() {
		s, err := p.in.ReadString('\n')
		ch <- line{s, err}
	}()
	var l line
	select {
	case l = <-ch:
	case <-ctx.Done():
		return orchestrator.Answer{}, ctx.Err()
	}
	if l.err != nil && !errors.Is(l.err, io.EOF) {
		return orchestrator.Answer{}, l.err
	}
	switch strings.ToLower(strings.TrimSpace(l.s)) {
	case "y", "yes":
		return orchestrator.Answer{Decision: orchestrator.AllowOnce}, nil
	case "a", "always":
		return orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeUser}, nil
	case "l", "local":
		if p.projectTrusted {
			return orchestrator.Answer{Decision: orchestrator.AllowAlways, Scope: orchestrator.ScopeLocal}, nil
		}
		fmt.Fprintln(p.out, "not allowed: a project rule needs a trusted project (`freecode trust`)")
	}
	return orchestrator.Answer{Decision: orchestrator.Deny}, nil
}
