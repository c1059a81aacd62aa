package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/mcp"
)

func newMCPStartCmd(a *app) *cobra.Command {
	var local, asJSON bool
	cmd := &cobra.Command{
		Use:   "start <name>",
		Short: "Start a server in the running sidecar; without one, connect to it once as a check",
		Long: `With a sidecar running for this config file (freecode serve --listen, found
through ~/.freecode/serve.json), start the server there: it stays running in
the sidecar, and its status is printed once it is connected or failed
(freecode mcp stop stops it).

With no sidecar, or with --local, connect to the server the way FreeCode will
(initialize, then tools/list), print its tools and stop it again: a quick
check that a server entry works, whatever runs elsewhere.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// mcp_live.go: a running sidecar takes the start.
			if !local {
				if started, err := a.startInSidecar(cmd, args[0], asJSON); started {
					return err
				}
			}
			if asJSON {
				return errors.New("--json is the status a sidecar answers, and no sidecar runs (or --local): `freecode mcp tools <name> --json` prints a server's tools")
			}
			return a.withConn(cmd, args[0], func(srv config.Server, st mcp.Status, tools []*mcpsdk.Tool) error {
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "✓ Server %q started with %d %s\n", srv.Name, len(tools), plural(len(tools), "tool", "tools"))
				if st.ToolListCut != "" {
					fmt.Fprintf(out, "  ! %s\n", termtext.Escape(st.ToolListCut))
				}
				fmt.Fprintf(out, "  %s\n", termtext.Escape(describeStatus(st)))
				for _, t := range tools {
					fmt.Fprintf(out, "  - %s%s\n", termtext.Escape(t.Name), marks(t))
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&local, "local", false, "connect once from this process as a check, even when a sidecar runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with a sidecar: print the server's status as a ServerStatus JSON object")
	return cmd
}

func newMCPToolsCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools <name>",
		Short: "Connect to an MCP server and print its tools",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withConn(cmd, args[0], func(srv config.Server, _ mcp.Status, tools []*mcpsdk.Tool) error {
				out := cmd.OutOrStdout()
				if asJSON {
					if tools == nil {
						tools = []*mcpsdk.Tool{}
					}
					b, err := json.MarshalIndent(tools, "", "  ")
					if err != nil {
						return err
					}
					// Valid JSON still, but a description cannot reorder
					// or hide what the terminal shows.
					_, err = out.Write(append(termtext.JSON(b), '\n'))
					return err
				}
				fmt.Fprintf(out, "%d %s of %q (R = read-only, D = destructive):\n", len(tools), plural(len(tools), "tool", "tools"), srv.Name)
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, t := range tools {
					fmt.Fprintf(tw, "  %s\t%s\t%s\n", termtext.Escape(t.Name), shortMarks(t), firstLine(t.Description, 100))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools/list result's tools as JSON")
	return cmd
}

// withConn connects to the named server, hands its tools to fn and stops
// the server. On failure it prints "✗ Server … failed" with the server's
// stderr tail and returns exitError(1). Ctrl-C (or SIGTERM) cancels the
// connect; Close then stops the process group, so nothing is left behind.
func (a *app) withConn(cmd *cobra.Command, name string, fn func(config.Server, mcp.Status, []*mcpsdk.Tool) error) error {
	cfg, path, err := a.load()
	if err != nil {
		return err
	}
	srv, err := lookup(cfg, path, name)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if !srv.Enabled {
		fmt.Fprintf(stderr, "note: %q is disabled in the config; starting it anyway for this check\n", srv.Name)
		srv.Enabled = true
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A one-shot check: report the first failure now, without retrying.
	conn := mcp.NewConn(srv, &mcp.ConnOptions{NoRetry: true, Auth: authOptions(),
		Versions: mcp.NewVersionMemo(filepath.Join(filepath.Dir(path), mcp.VersionMemoFile)),
		// A package runner installing on a first start, a broken npx
		// cache removed: said while it happens, not only at the end.
		OnNotice: func(msg string) { fmt.Fprintf(stderr, "note: %s\n", termtext.EscapeLines(msg)) }})
	startErr := conn.Start(ctx)
	var tools []*mcpsdk.Tool
	if startErr == nil {
		tools = conn.Tools()
	}
	st := conn.Status()
	closeErr := conn.Close()
	if startErr != nil {
		// Conn's errors start "starting <name>: "; the ✗ line says that already.
		reason := strings.TrimPrefix(startErr.Error(), "starting "+srv.Name+": ")
		if ctx.Err() != nil {
			reason = "interrupted"
		}
		fmt.Fprintf(stderr, "✗ Server %q failed: %s\n", srv.Name, termtext.EscapeLines(reason))
		if hint := signInHint(startErr, srv.Name); hint != "" {
			fmt.Fprintln(stderr, hint)
		}
		printTail(stderr, st.StderrTail)
		return exitError(1)
	}
	if err := fn(srv, st, tools); err != nil {
		return err
	}
	if closeErr != nil {
		// The tools were listed; a server that will not stop cleanly is
		// worth a note but not a failure of the check.
		fmt.Fprintf(stderr, "note: stopping %q: %s\n", srv.Name, termtext.EscapeLines(closeErr.Error()))
	}
	return nil
}

// describeStatus says what the server reported and, for a remote server,
// which transport won (auto tries Streamable HTTP, then legacy SSE).
func describeStatus(st mcp.Status) string {
	var parts []string
	if st.ServerInfo != nil {
		parts = append(parts, strings.TrimSpace(st.ServerInfo.Name+" "+st.ServerInfo.Version))
	}
	if st.ProtocolVersion != "" {
		parts = append(parts, "protocol "+st.ProtocolVersion)
	}
	switch st.Transport {
	case "http":
		parts = append(parts, "over Streamable HTTP")
	case "sse":
		parts = append(parts, "over legacy HTTP+SSE")
	case "stdio":
		parts = append(parts, fmt.Sprintf("over stdio, pid %d", st.PID))
	}
	return strings.Join(parts, ", ")
}

func printTail(w io.Writer, tail []string) {
	if len(tail) == 0 {
		return
	}
	fmt.Fprintln(w, "  stderr (last lines):")
	for _, l := range tail {
		fmt.Fprintf(w, "    %s\n", termtext.Escape(l))
	}
}

// marks describes a tool's annotations for `mcp start`. Only hints the server
// states are shown: a missing hint is not a claim either way.
func marks(t *mcpsdk.Tool) string {
	var m []string
	if ro, d := hints(t); ro {
		m = append(m, "read-only")
	} else if d {
		m = append(m, "destructive")
	}
	if len(m) == 0 {
		return ""
	}
	return " [" + strings.Join(m, ", ") + "]"
}

// shortMarks is marks as a fixed-width column for `mcp tools`.
func shortMarks(t *mcpsdk.Tool) string {
	switch ro, d := hints(t); {
	case ro:
		return "R"
	case d:
		return "D"
	}
	return "-"
}

// hints returns readOnlyHint and destructiveHint as the server set them;
// destructiveHint counts only when the tool is not read-only (MCP spec).
func hints(t *mcpsdk.Tool) (readOnly, destructive bool) {
	a := t.Annotations
	if a == nil {
		return false, false
	}
	return a.ReadOnlyHint, !a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint
}

// firstLine returns s's first non-empty line, cut to n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return termtext.Escape(s)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
