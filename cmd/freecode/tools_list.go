package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/orchestrator"
	"github.com/freecode/freecode/server/wire"
)

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
			r, err := a.openTools(ctx, *project, want, false)
			if err != nil {
				return err
			}
			defer r.w.Close()
			if server != "" && len(r.started) == 0 {
				return fmt.Errorf("no enabled server named %q", server)
			}
			r.reportProblems(cmd.ErrOrStderr())
			failed := r.reportFailures(cmd.ErrOrStderr())
			infos := r.w.Tools(server)
			out := cmd.OutOrStdout()
			if asJSON {
				list := convert(infos, wire.ToolInfo)
				if list == nil {
					list = []protocol.ToolInfo{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(list); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, t := range infos {
					// No empty last cell: it would pad every line with spaces.
					fmt.Fprintf(tw, "%s\t%s\t%s", t.ID, infoMark(t), firstLine(t.Description, 80))
					if t.Alias != "" {
						fmt.Fprintf(tw, "\talias %s", t.Alias)
					}
					fmt.Fprintln(tw)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				ok := len(r.started) - failed
				fmt.Fprintf(cmd.ErrOrStderr(), "%d %s from %d %s\n", len(infos), plural(len(infos), "tool", "tools"),
					ok, plural(ok, "server", "servers"))
			}
			if len(r.pending) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %d project %s awaiting your approval (%s): see `freecode mcp approve --project %s`\n",
					len(r.pending), plural(len(r.pending), "server", "servers"), strings.Join(r.pending, ", "), r.projectDir)
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
