package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/server/wire"
)

// exitNoSidecar is the exit status of `freecode mcp status` when no sidecar
// runs (without --probe), as systemctl's is for a unit that does not run:
// a script can tell "none" from a failure.
const exitNoSidecar = 3

// statusTailLines is how many stderr lines of each server `mcp status`
// shows; `mcp logs` shows them all.
const statusTailLines = 5

func newMCPStatusCmd(a *app) *cobra.Command {
	var (
		asJSON, probe, watch bool
		project              string
	)
	cmd := &cobra.Command{
		Use:   "status [name...]",
		Short: "Show what the running sidecar's servers are doing, or probe them from here",
		Long: `Show each MCP server as the running sidecar has it (freecode serve --listen,
found through ~/.freecode/serve.json, serving the same config file): state, pid,
tools, transport, protocol version, when it connected, the last health ping, the
last error and the end of its stderr; and the problems of the config files it
watches (path:line:column: message), which leave it running what they last held.

With --watch it stays connected and draws the status again whenever it
changes, a line per server (state, pid, tools, the last error, the retry
awaited), until Ctrl-C: on a terminal in place, elsewhere each drawing after
the last under its time.

With no sidecar it says so and how to start one. --probe connects each
configured server from this process instead (the project's approved ones too),
reports the same fields, and stops them again.

Exit status: 0; 1 if --probe finds a server that does not connect; 3 if no
sidecar runs (without --probe).`,
		Example: `  freecode mcp status
  freecode mcp status github --json
  freecode mcp status --probe
  freecode mcp status --watch`,
		RunE: func(cmd *cobra.Command, names []string) error {
			ctx, stop := signalContext(cmd)
			defer stop()
			out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			var (
				sts         []protocol.ServerStatus
				head, where string
				problems    []protocol.ConfigProblems
			)
			if watch && (probe || asJSON) {
				return errors.New("--watch draws the sidecar's status for a person: not with --probe or --json")
			}
			if watch {
				return a.watchStatus(ctx, out, names)
			}
			if probe {
				var err error
				if sts, err = a.probe(ctx, stderr, project, names); err != nil {
					return err
				}
				head = "Probed from this process (no sidecar asked): each server connected once, then stopped."
				where = "the config or the project's approved servers"
			} else {
				sc, err := a.connectSidecar(ctx, nil)
				var none *noSidecarError
				if errors.As(err, &none) {
					w := out
					if asJSON {
						w = stderr
					}
					fmt.Fprintf(w, "No sidecar is running for %s\n(%s).\n%s\nOr connect each server from here, once: `freecode mcp status --probe`.\n",
						none.config, none.reason, startHint())
					return exitError(exitNoSidecar)
				}
				if err != nil {
					return err
				}
				defer sc.Close()
				if sts, err = sc.Servers(ctx); err != nil {
					return sc.explain(ctx, err)
				}
				head, where = sc.describe(), "the sidecar"
				problems = sc.project.Problems
			}
			sts, err := selectStatuses(sts, names, where, probe)
			if err != nil {
				return err
			}
			if asJSON {
				// The array stays the protocol's type; the problems go
				// where a person reads them.
				printProblems(stderr, problems)
				if err := writeJSON(out, sts); err != nil {
					return err
				}
			} else {
				fmt.Fprintln(out, head)
				printProblems(out, problems)
				if len(sts) == 0 {
					fmt.Fprintln(out, "No MCP servers. Add one with `freecode mcp add <name> local <command>`.")
				}
				now := time.Now()
				for i := range sts {
					fmt.Fprintln(out)
					printStatus(out, &sts[i], now, statusTailLines)
				}
			}
			if probe && slices.ContainsFunc(sts, notUp) {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of ServerStatus objects, the protocol's type")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "stay connected and draw the status again whenever it changes, until Ctrl-C")
	cmd.Flags().BoolVar(&probe, "probe", false, "connect each server from this process instead of asking a sidecar")
	cmd.Flags().StringVar(&project, "project", "", "with --probe: the project directory whose approved servers count too (default: the current directory)")
	return cmd
}

// watchStatus is `mcp status --watch`.
func (a *app) watchStatus(ctx context.Context, out io.Writer, names []string) error {
	w := newWatcher(names, out)
	sc, err := a.connectSidecar(ctx, &frontend.Options{OnNotification: w.take})
	var none *noSidecarError
	if errors.As(err, &none) {
		fmt.Fprintf(out, "No sidecar is running for %s\n(%s).\n%s\n", none.config, none.reason, startHint())
		return exitError(exitNoSidecar)
	}
	if err != nil {
		return err
	}
	defer sc.Close()
	// Before Close, which waits for the notification callback.
	defer close(w.stop)
	return w.watch(ctx, sc, out)
}

// printProblems prints the problems of the sidecar's files as a compiler
// prints errors (path:line:column: key: message), which terminals and
// editors turn into links. The message may quote the file: it is escaped.
func printProblems(w io.Writer, files []protocol.ConfigProblems) {
	if len(files) == 0 {
		return
	}
	fmt.Fprintln(w, "Config problems (meanwhile the sidecar runs the last version of each file that loaded):")
	for _, f := range files {
		for _, p := range f.Problems {
			at := f.Path
			if p.Line > 0 {
				at += ":" + strconv.Itoa(p.Line)
				if p.Column > 0 {
					at += ":" + strconv.Itoa(p.Column)
				}
			}
			msg := p.Message
			if p.Key != "" {
				msg = p.Key + ": " + msg
			}
			fmt.Fprintf(w, "  %s: %s\n", termtext.Escape(at), termtext.Escape(msg))
		}
	}
}

// notUp reports whether a probed server that should have connected did
// not.
func notUp(st protocol.ServerStatus) bool {
	switch st.State {
	case protocol.StateConnected, protocol.StateDisabled, protocol.StateAwaitingApproval:
		return false
	}
	return true
}

// selectStatuses returns the statuses of names, in the order named, or
// every status without names. where says where an unknown name was looked
// for; a probe, which ran only the servers named, has no others to list.
func selectStatuses(sts []protocol.ServerStatus, names []string, where string, probed bool) ([]protocol.ServerStatus, error) {
	if len(names) == 0 {
		return sts, nil
	}
	out := make([]protocol.ServerStatus, 0, len(names))
	for _, name := range names {
		st, err := findStatus(sts, name, where)
		if err != nil && probed {
			err = fmt.Errorf("no server named %q in %s", name, where)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *st)
	}
	return out, nil
}

// probe connects the servers (names, or every enabled one) from this
// process as `freecode tools` does, each tried once, and returns their
// statuses once each is connected or failed; the servers are stopped
// before it returns. The problems of the files it read go to stderr.
func (a *app) probe(ctx context.Context, stderr io.Writer, project string, names []string) ([]protocol.ServerStatus, error) {
	var want func(string) bool
	if len(names) > 0 {
		want = func(s string) bool { return slices.Contains(names, s) }
	}
	r, err := a.openTools(ctx, project, want, false)
	if err != nil {
		return nil, err
	}
	r.reportProblems(stderr)
	sts := r.w.Statuses()
	r.w.Close()
	// Converted as the sidecar converts them, so the probe prints what a
	// sidecar would have answered.
	return convert(sts, wire.ServerStatus), nil
}

// stateMarks are the marks before a server's name: ✓ it works, ✗ it does
// not, … it is getting there, ! it needs the user. An idle server (started
// on demand) works: its first call starts it.
var stateMarks = map[protocol.ServerState]string{
	protocol.StateConnected:        "✓",
	protocol.StateIdle:             "✓",
	protocol.StateFailed:           "✗",
	protocol.StateConnecting:       "…",
	protocol.StateReconnecting:     "…",
	protocol.StateNeedsAuth:        "!",
	protocol.StateAwaitingApproval: "!",
	protocol.StateDisabled:         "-",
	protocol.StateStopped:          "-",
	protocol.StateRemoved:          "-",
	protocol.StateBlocked:          "✗",
}

// retryText is a retry awaited as the frontends say it: "retrying 2/6 in
// 4 s" (the wait in whole seconds, "now" once it is due).
func retryText(r *protocol.RetryStatus, now time.Time) string {
	wait := r.At.Sub(now)
	if wait < time.Second/2 {
		return fmt.Sprintf("retrying %d/%d now", r.Attempt, r.Max)
	}
	return fmt.Sprintf("retrying %d/%d in %d s", r.Attempt, r.Max, int(wait.Round(time.Second).Seconds()))
}

// printStatus prints one server's status for a person, with the last
// tail lines of its stderr (all of them if tail < 0). Everything a server
// or a project wrote is escaped.
func printStatus(w io.Writer, st *protocol.ServerStatus, now time.Time, tail int) {
	mark := stateMarks[st.State]
	if mark == "" {
		mark = "?"
	}
	fmt.Fprintf(w, "%s %s: %s\n", mark, termtext.Escape(st.Name), termtext.Escape(string(st.State)))
	field := func(label, value string) {
		fmt.Fprintf(w, "    %-11s%s\n", label, value)
	}
	field("scope", termtext.Escape(string(st.Scope)+", "+string(st.Type)))
	if st.Blocked != "" {
		field("blocked", termtext.EscapeLines(strings.TrimPrefix(st.Blocked, "blocked ")))
	}
	transport := string(st.Transport)
	if transport == "" {
		transport = "not known yet"
	}
	if st.PID != 0 {
		transport += ", pid " + strconv.Itoa(st.PID)
	}
	field("transport", termtext.Escape(transport))
	if len(st.Command) > 0 {
		field("command", termtext.Escape(quoteArgv(st.Command)))
	}
	if st.URL != "" {
		field("url", termtext.Escape(st.URL))
	}
	if r := st.Registry; r != nil {
		field("registry", termtext.Escape(describeRegistry(&config.Registry{Name: r.Name, Version: r.Version, URL: r.URL, Digest: r.Digest})))
	}
	if st.Sandbox != "" {
		field("sandbox", termtext.Escape(strings.TrimPrefix(st.Sandbox, "sandboxed: ")))
	}
	field("tools", strconv.Itoa(st.ToolCount))
	if st.ToolListCut != "" {
		field("", "! "+termtext.Escape(st.ToolListCut))
	}
	if st.ProtocolVersion != "" || st.ServerInfo != nil {
		v := st.ProtocolVersion
		if st.ServerInfo != nil {
			v = strings.TrimSpace(v + " (" + strings.TrimSpace(st.ServerInfo.Name+" "+st.ServerInfo.Version) + ")")
		}
		field("protocol", termtext.Escape(v))
	}
	// A server that is not connected keeps the time its last session
	// came up, which would read as if it were up still.
	if !st.ConnectedAt.IsZero() && st.State == protocol.StateConnected {
		field("connected", fmt.Sprintf("since %s (%s ago)", st.ConnectedAt.Local().Format(time.DateTime), now.Sub(st.ConnectedAt).Round(time.Second)))
	}
	switch {
	case st.LastPingMs > 0:
		field("last ping", strconv.FormatFloat(st.LastPingMs, 'f', -1, 64)+" ms")
	case st.State == protocol.StateConnected:
		field("last ping", "none yet")
	}
	if st.LastError != "" {
		lines := strings.Split(st.LastError, "\n")
		field("last error", termtext.Escape(lines[0]))
		for _, l := range lines[1:] {
			field("", termtext.Escape(l))
		}
	}
	if r := st.Retry; r != nil {
		field("", retryText(r, now))
	}
	lines := st.StderrTail
	if tail >= 0 && len(lines) > tail {
		field("stderr", fmt.Sprintf("(%d lines before these: freecode mcp logs %s)", len(lines)-tail, termtext.Escape(st.Name)))
		lines = lines[len(lines)-tail:]
	}
	for i, l := range lines {
		label := ""
		if i == 0 && (tail < 0 || len(st.StderrTail) <= tail) {
			label = "stderr"
		}
		field(label, termtext.Escape(l))
	}
}
