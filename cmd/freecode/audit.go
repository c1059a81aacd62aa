package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/audit"
	"github.com/freecode/freecode/internal/termtext"
)

func init() { subcommands = append(subcommands, newAuditCmd) }

// auditDir returns the directory of the audit trail, as the sidecar picks
// it (config.AuditDir): the managed policy's audit.dir, else "audit"
// beside the config file, ~/.freecode/audit by default. Managed settings
// that do not load are an error: the trail may be where they say.
func auditDir(a *app) (string, error) {
	path, err := a.path()
	if err != nil {
		return "", err
	}
	m, err := config.LoadManaged()
	if err != nil {
		return "", fmt.Errorf("finding the audit trail: %w", err)
	}
	return config.AuditDir(path, m), nil
}

func newAuditCmd(a *app) *cobra.Command {
	var (
		follow, asJSON bool
		since, server  string
	)
	cmd := &cobra.Command{
		Use:   "audit [--follow] [--since DURATION|TIME] [--server NAME] [--json]",
		Short: "Print the audit trail: tool calls and how they were decided, approvals, trust and file changes",
		Long: `Print the audit trail FreeCode keeps in ~/.freecode/audit: one line per tool call
(who asked, the tool and its server, the decision and the rule that made it or
your answer, the outcome and duration), approval and review accepted, trust
given or revoked, config or rule file changed, and server blocked by policy.

--since keeps what came after a time (2026-12-06T09:00:00Z) or within a
duration back from now (2h, 30m); --server keeps one server's lines; --json
prints the lines as they are written; --follow goes on printing new lines
until Ctrl-C.

` + "`freecode audit verify`" + ` checks that no line was removed, changed or moved.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := auditDir(a)
			if err != nil {
				return err
			}
			f := audit.Filter{Server: server}
			if since != "" {
				if f.Since, err = parseSince(since, time.Now()); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			print := func(e audit.Entry) error {
				if asJSON {
					_, err := out.Write(append(termtext.JSON(e.Raw), '\n'))
					return err
				}
				_, err := fmt.Fprintln(out, formatEntry(e))
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			if follow {
				err = audit.Follow(ctx, dir, f, print)
				if ctx.Err() != nil {
					return nil // Ctrl-C
				}
			} else {
				err = audit.Read(ctx, dir, f, print)
			}
			return noTrail(dir, err)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "go on printing new lines as they come, until Ctrl-C")
	cmd.Flags().StringVar(&since, "since", "", "only lines after this time (RFC 3339) or within this duration back (2h)")
	cmd.Flags().StringVar(&server, "server", "", "only the lines about this server")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lines as written, one JSON object a line")
	cmd.AddCommand(newAuditVerifyCmd(a))
	return cmd
}

func newAuditVerifyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check the audit trail's chain: no line removed, changed or moved",
		Long: `Check that each line of the audit trail carries the hash of the line before it,
across the rotated files, and that the trail ends where its head file says:
a line deleted, edited or moved, a file removed or lines cut from the end are
reported with their file and line, and the command exits 1. A line a crash cut
short is a warning. The chain has no secret in it: whoever can write the
directory can rewrite it whole, which only a directory the user cannot write
(a managed setting) rules out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := auditDir(a)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			r, err := audit.Verify(ctx, dir)
			if err != nil {
				return noTrail(dir, err)
			}
			return printReport(cmd.OutOrStdout(), cmd.ErrOrStderr(), dir, &r)
		},
	}
}

// noTrail explains a trail's directory that does not exist.
func noTrail(dir string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no audit trail in %s yet", termtext.Escape(dir))
	}
	return err
}

// printReport prints what Verify found; problems make the exit status 1.
func printReport(out, stderr io.Writer, dir string, r *audit.Report) error {
	for _, p := range r.Torn {
		fmt.Fprintf(stderr, "warning: %s:%d: a line cut short (a write a crash interrupted, at byte %d): skipped\n",
			termtext.Escape(filepath.Join(dir, p.File)), p.Line, p.Offset)
	}
	for _, p := range r.Problems {
		at := filepath.Join(dir, p.File)
		if p.Line > 0 {
			at = fmt.Sprintf("%s:%d", at, p.Line)
		}
		fmt.Fprintf(out, "%s: %s\n", termtext.Escape(at), p.Msg)
	}
	files := fmt.Sprintf("%d %s", len(r.Files), plural(len(r.Files), "file", "files"))
	if !r.OK() {
		fmt.Fprintf(out, "%d %s in %d %s of %s: the audit trail was changed\n",
			len(r.Problems), plural(len(r.Problems), "problem", "problems"), r.Lines, plural(r.Lines, "line", "lines"), files)
		return exitError(1)
	}
	fmt.Fprintf(out, "verified %d %s in %s", r.Lines, plural(r.Lines, "line", "lines"), files)
	if r.First > 1 {
		fmt.Fprintf(out, " (from seq %d: the older files were removed by rotation)", r.First)
	}
	fmt.Fprintln(out)
	return nil
}

// parseSince reads --since: a time in RFC 3339, or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration back from now (2h, 30m) or a time (2026-12-06T09:00:00Z)", s)
}

// formatEntry is an entry on one line: time, kind, who asked, the tool or
// server, the decision and its rule or the answer, the outcome and
// duration, and what else the entry says. Every part may be a server's or
// a project's text, and is escaped.
func formatEntry(e audit.Entry) string {
	parts := []string{e.Time.Local().Format("2006-01-02 15:04:05.000"), e.Kind}
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(e.Frontend)
	switch {
	case e.Tool != "" && e.Server != "" && !strings.Contains(e.Tool, e.Server):
		add(e.Server + "/" + e.Tool)
	case e.Tool != "":
		add(e.Tool)
	default:
		add(e.Server)
	}
	decision := e.Decision
	if e.Rule != "" {
		decision += " by " + e.Rule
		if e.RuleFile != "" {
			decision += " in " + e.RuleFile
		}
	}
	if e.Answer != "" {
		decision = strings.TrimPrefix(decision+", answered "+e.Answer, ", ")
	}
	add(decision)
	add(e.Outcome)
	if e.DurationMs > 0 || e.Outcome != "" && e.Kind == audit.KindCall {
		add(fmt.Sprintf("%dms", e.DurationMs))
	}
	if e.TaskID != "" {
		add("task " + e.TaskID)
	}
	add(e.File)
	if e.By != "" {
		add("by " + e.By)
	}
	add(e.Detail)
	return termtext.Escape(strings.Join(parts, "  "))
}
