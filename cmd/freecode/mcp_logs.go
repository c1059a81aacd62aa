package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/frontend"
	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/internal/termtext"
)

func newMCPLogsCmd(a *app) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs <name> [--follow]",
		Short: "Print the end of a server's stderr in the running sidecar; --follow streams its log",
		Long: `Print a server's state and the end of its stderr as the running sidecar keeps it
(freecode serve --listen, found through ~/.freecode/serve.json, for the same
config file). With --follow, go on printing its log as it comes: its stderr
lines and the log messages it sends over MCP, secrets masked, and its state
changes, until Ctrl-C.

A server's stderr is kept only while something runs it: without a sidecar,
` + "`freecode mcp start <name>`" + ` shows it when the server fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			ctx, stop := signalContext(cmd)
			defer stop()
			f := &follower{name: name, notes: make(chan frontend.Notification), stop: make(chan struct{})}
			var opts *frontend.Options
			if follow {
				opts = &frontend.Options{OnNotification: f.take}
			}
			sc, err := a.connectSidecar(ctx, opts)
			var none *noSidecarError
			if errors.As(err, &none) {
				return fmt.Errorf("%w\n%s", err, startHint())
			}
			if err != nil {
				return err
			}
			defer sc.Close()
			// Before Close, which waits for the notification callback.
			defer close(f.stop)
			sts, err := sc.Servers(ctx)
			if err != nil {
				return sc.explain(ctx, err)
			}
			st, err := findStatus(sts, name, "the sidecar")
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			f.state = st.State
			fmt.Fprintf(out, "%s %s: %s", stateMarks[st.State], termtext.Escape(name), st.State)
			if st.PID != 0 {
				fmt.Fprintf(out, ", pid %d", st.PID)
			}
			fmt.Fprintln(out)
			if len(st.StderrTail) == 0 {
				fmt.Fprintln(out, "(no stderr lines)")
			}
			for _, l := range st.StderrTail {
				fmt.Fprintln(out, termtext.Escape(l))
			}
			if !follow {
				return nil
			}
			// A line the server writes while the tail is read may come
			// twice, in the tail and in the stream; none is missed.
			f.ready.Store(true)
			fmt.Fprintf(cmd.ErrOrStderr(), "-- following %s's log; Ctrl-C to stop --\n", termtext.Escape(name))
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-sc.Done():
					return errors.New("the sidecar closed the connection: it stopped")
				case n := <-f.notes:
					f.print(out, n)
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "go on printing the server's log as it comes, until Ctrl-C")
	return cmd
}

// follower passes one server's log and state changes from the sidecar's
// notifications to `mcp logs --follow`.
type follower struct {
	name  string
	ready atomic.Bool // the tail is printed: what comes now is new
	notes chan frontend.Notification
	stop  chan struct{} // closed when the command returns
	state protocol.ServerState
}

// take is the Client's notification callback; it blocks until the
// command takes the notification or returns.
func (f *follower) take(n frontend.Notification) {
	if !f.ready.Load() || n.Method != protocol.NotifyServersLog && n.Method != protocol.NotifyServersStatus {
		return
	}
	select {
	case f.notes <- n:
	case <-f.stop:
	}
}

// print prints a log line of the server, or a change of its state.
func (f *follower) print(w io.Writer, n frontend.Notification) {
	switch n.Method {
	case protocol.NotifyServersLog:
		var l protocol.ServerLog
		if json.Unmarshal(n.Params, &l) != nil || l.Name != f.name {
			return
		}
		tag := string(l.Source)
		if l.Source != protocol.SourceStderr || l.Level != protocol.LevelInfo {
			tag += " " + string(l.Level)
		}
		fmt.Fprintf(w, "%s [%s] %s\n", l.Time.Local().Format("15:04:05.000"), termtext.Escape(tag), termtext.Escape(l.Message))
	case protocol.NotifyServersStatus:
		var st protocol.ServerStatus
		if json.Unmarshal(n.Params, &st) != nil || st.Name != f.name || st.State == f.state {
			return
		}
		f.state = st.State
		line := fmt.Sprintf("-- %s: %s", f.name, st.State)
		if st.LastError != "" && st.State != protocol.StateConnected {
			line += ": " + st.LastError
		}
		fmt.Fprintln(w, termtext.Escape(line)+" --")
	}
}
