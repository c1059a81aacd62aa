package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/defscache"
	"github.com/freecode/freecode/internal/termtext"
)

func newToolsDefsCmd(a *app, project *string) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "defs",
		Short: "Print the tools array a provider receives, and its hash",
		Long: `Print the exact tools array FreeCode sends to a provider (stdout) and its
content hash (stderr). Tools whose schema cannot be converted are left out
and reported on stderr, and so is the estimated size in tokens (bytes/4) of
every format's array, sent and, when tools are deferred (mcp.deferTools),
as it would be without deferral.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := defscache.Format(format)
			if f != defscache.FormatAnthropic && f != defscache.FormatOpenAI {
				return fmt.Errorf("--format must be anthropic or openai, not %q", format)
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			r, err := a.openTools(ctx, *project, nil, false)
			if err != nil {
				return err
			}
			defer r.w.Close()
			stderr := cmd.ErrOrStderr()
			r.reportProblems(stderr)
			r.reportFailures(stderr)
			entry, problems, err := r.w.Definitions(ctx, f)
			if err != nil {
				return err
			}
			for _, p := range problems {
				what := "warning"
				if p.Dropped {
					what = "left out"
				}
				fmt.Fprintf(stderr, "%s: %s: %s\n", p.ToolID, what, termtext.Escape(p.Message))
			}
			out := cmd.OutOrStdout()
			if _, err := out.Write(entry.Bytes); err != nil {
				return err
			}
			fmt.Fprintln(out)
			fmt.Fprintf(stderr, "%s: %d %s, hash %s\n", f, entry.Count, plural(entry.Count, "tool", "tools"), entry.Hash)
			// Every format's size, so that one run compares them, with
			// and without deferred tools.
			fmt.Fprintln(stderr, "estimated tokens (bytes/4):")
			for _, other := range defscache.Formats() {
				e, _, err := r.w.Definitions(ctx, other)
				if err != nil {
					return err
				}
				fmt.Fprintf(stderr, "  %s: %d sent", other, e.Tokens())
				if e.Deferred > 0 {
					fmt.Fprintf(stderr, ", %d without deferral (%d %s deferred)", e.FullTokens(), e.Deferred, plural(e.Deferred, "tool", "tools"))
				} else {
					fmt.Fprint(stderr, ", no tool deferred")
				}
				fmt.Fprintln(stderr)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", string(defscache.FormatAnthropic), "provider format: anthropic or openai")
	return cmd
}
