package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/internal/toolid"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/workspace"
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
validation, permission rules, timeout and result cap, as the sidecar does.

The project directory (--project, default the current directory) is the MCP
root the servers are shown, as an editor's workspace folder is the sidecar's.`,
	}
	var project string
	cmd.PersistentFlags().StringVar(&project, "project", "", "project directory for project servers and rules (default: the current directory)")
	cmd.AddCommand(newToolsListCmd(a, &project), newToolsDefsCmd(a, &project), newToolsCallCmd(a, &project))
	return cmd
}

// toolsRun is the workspace of one `freecode tools` command, its servers
// settled.
type toolsRun struct {
	w          *workspace.Workspace
	projectDir string
	started    []string          // the servers it started, by name
	failed     map[string]string // server → why it is not connected
	pending    []string          // project servers awaiting the user's approval
	problems   []workspace.ProblemsEvent
	settings   string // the project's settings file, if it has one
}

// openTools opens the workspace of a command and waits for the servers for
// which want returns true (nil: every enabled one) to connect or fail,
// each within its own timeout. A config file that does not load fails the
// command: unlike the sidecar, the CLI has no last good state to go on
// with. The project's settings are the repository's, not the user's: when
// their servers do not load, the command goes on with the user's servers
// and the run's reportProblems says why the project's are missing. Rule
// files count only if withRules, and then one whose rules do not load fails
// the command, since a deny rule it holds would not apply. adjust, if
// given, sets more of the workspace's options. Close the run's workspace
// when done.
func (a *app) openTools(ctx context.Context, project string, want func(string) bool, withRules bool, adjust ...func(*workspace.Options)) (*toolsRun, error) {
	path, err := a.path()
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
	// The project directory is the one MCP root the servers are shown, as
	// an editor's workspace folder is the sidecar's: a server that works on
	// the user's files (server-filesystem, server-everything's
	// get-roots-list) sees where the command runs.
	opts := &workspace.Options{ConfigPath: path, Root: project, Roots: []string{project}, Want: want, NoRetry: true}
	for _, f := range adjust {
		f(opts)
	}
	w, err := workspace.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	info := w.Project()
	problems := w.Problems()
	for _, p := range problems {
		switch {
		case p.Path == info.ConfigPath && p.Err != nil:
			w.Close()
			return nil, p.Err
		case withRules && p.RulesErr != nil:
			w.Close()
			return nil, fmt.Errorf("%w\n(no call runs while a rule file does not load: its deny and ask rules would not apply)", p.RulesErr)
		}
	}
	r := &toolsRun{w: w, projectDir: project, failed: map[string]string{}, problems: problems, settings: info.SettingsPaths.Project}
	var unsettled *workspace.NotSettledError
	if err := w.WaitSettled(ctx); err != nil && !errors.As(err, &unsettled) {
		w.Close()
		return nil, err
	}
	for _, st := range w.Statuses() {
		switch st.State {
		case mcp.StateAwaitingApproval:
			r.pending = append(r.pending, st.Name)
			continue
		case mcp.StateDisabled:
			continue
		case mcp.StateBlocked:
			// Never started: why, and the managed file's entry, is the
			// reason a call of its tools is refused. The policy lists
			// every server it blocks, wanted or not.
			if want != nil && !want(st.Name) {
				continue
			}
			r.failed[st.Name] = st.Blocked
		case mcp.StateFailed, mcp.StateStopped:
			r.failed[st.Name] = st.LastError
		case mcp.StateConnecting, mcp.StateReconnecting:
			r.failed[st.Name] = "did not connect in time"
			if st.LastError != "" {
				r.failed[st.Name] = st.LastError
			}
		}
		r.started = append(r.started, st.Name)
	}
	return r, nil
}

// reportFailures prints one line per server that did not connect and
// returns how many there were.
func (r *toolsRun) reportFailures(w io.Writer) int {
	for _, name := range r.started {
		if msg, ok := r.failed[name]; ok {
			fmt.Fprintf(w, "✗ Server %q failed: %s\n", name, termtext.EscapeLines(strings.TrimPrefix(msg, "starting "+name+": ")))
		}
	}
	return len(r.failed)
}

// reportProblems prints the problems of the files the run read, as a
// compiler prints them (path:line:column: key: message), and what follows
// from a project settings file whose servers do not load.
func (r *toolsRun) reportProblems(w io.Writer) {
	for _, p := range r.problems {
		for _, pr := range p.Problems {
			at := pr.Position(p.Path)
			msg := pr.Message
			if pr.Key != "" {
				msg = pr.Key + ": " + msg
			}
			fmt.Fprintf(w, "warning: %s: %s\n", termtext.Escape(at), termtext.Escape(msg))
		}
		if p.Path == r.settings && p.Err != nil {
			fmt.Fprintf(w, "warning: the project's servers are left out until %s is fixed\n", termtext.Escape(p.Path))
		}
	}
}

func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}

// serverOf returns the filter of servers a call of id needs: the server an
// MCP id or alias names; every enabled one for tool_search, which searches
// the tools they bring (a server not run has none registered, or only its
// idle manifest's); none for another built-in.
func serverOf(id string) func(string) bool {
	if id == orchestrator.ToolSearchName {
		return func(string) bool { return true }
	}
	srv, ok := toolid.ServerOf(id)
	return func(s string) bool { return ok && s == srv }
}
