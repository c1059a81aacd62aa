package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/permissions"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newTrustCmd) }

// newTrustCmd records that the user trusts a project, with its rules as
// they are now. Until then the project's .freecode/settings*.json can only
// restrict (their allow rules are ignored): a cloned repository is
// untrusted input. After it, what they loosen by another hand waits for
// the user to run it again: it is also how a change is accepted.
func newTrustCmd(a *app) *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{
		Use:   "trust [project-dir]",
		Short: "Trust a project's permission rules as they are now (default: the current directory)",
		Long: `Trust a project so that the allow rules in its .freecode/settings.json and
.freecode/settings.local.json apply. Before that, a project's files can only
deny or ask, never allow. Trust is recorded by the project's real path in your
config file; --revoke takes it back.

Trusting accepts the two files' rules as they are now, and prints what that
accepts. From then on a change to them by any other hand than FreeCode's own
(a pull, an editor, a server of the project's) tightens at once but never
loosens: a new allow rule is ignored and a deny or ask rule taken out is still
enforced until you accept the change by running freecode trust again (or in
the editor). What you accepted is kept in ~/.freecode/trust, never in the
project.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(abs); err != nil {
				return err
			} else if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", abs)
			}
			path, err := a.path()
			if err != nil {
				return err
			}
			out, shown := cmd.OutOrStdout(), termtext.Escape(abs)
			if revoke {
				// The config first: a sidecar that reloads in between
				// finds the project untrusted, not trusted without its
				// record (which it would take the files as they are for).
				if err := config.SetTrusted(path, abs, false); err != nil {
					return unchanged(err)
				}
				if err := permissions.RemoveAccepted(abs); err != nil {
					return err
				}
				fmt.Fprintf(out, "No longer trusting %s: its allow rules are ignored again.\n", shown)
				return nil
			}
			// The record first: a sidecar that reloads in between finds
			// the project trusted only with it.
			opts := permissions.LoadOptions{UserFile: filepath.Join(filepath.Dir(path), permissions.SettingsFile), ProjectDir: abs}
			_, readErr := permissions.ReadProject(opts, nil)
			before, now, err := permissions.Accept(opts, "")
			if err != nil {
				return unchanged(err)
			}
			if err := config.SetTrusted(path, abs, true); err != nil {
				return unchanged(err)
			}
			fmt.Fprintf(out, "Trusting %s: the allow rules in its .freecode settings now apply.\n", shown)
			printAccepted(out, before, now, opts)
			if readErr != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n(what you had accepted of a file that does not load stays; run freecode trust again once it is fixed)\n", termtext.EscapeLines(readErr.Error()))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "stop trusting the project, and forget the rules accepted of it")
	return cmd
}

// printAccepted prints what accepting now loosened beyond before (nil: the
// project's first trust, or one before FreeCode kept records, of which
// every allow rule is shown).
func printAccepted(w io.Writer, before, now *permissions.Accepted, opts permissions.LoadOptions) {
	first := before == nil
	if first {
		before = &permissions.Accepted{}
	}
	paths := map[permissions.Source]string{}
	for _, src := range []permissions.Source{permissions.SourceProject, permissions.SourceLocal} {
		paths[src], _ = permissions.ScopeFile(src, "", opts.ProjectDir)
	}
	changes := permissions.Loosened(before, now, paths)
	switch {
	case len(changes) == 0 && !first:
		fmt.Fprintln(w, "Its rules are as you last accepted them: nothing new was accepted.")
		return
	case len(changes) == 0:
		return
	case first:
		fmt.Fprintln(w, "Accepted:")
	default:
		fmt.Fprintln(w, "Accepted what its rule files loosened since you last accepted them:")
	}
	for _, c := range changes {
		fmt.Fprintf(w, "  %s\n", termtext.Escape(c.Path))
		for _, p := range c.Allow {
			fmt.Fprintf(w, "    + allow %s\n", termtext.Escape(p))
		}
		for _, p := range c.Deny {
			fmt.Fprintf(w, "    - deny  %s (no longer enforced)\n", termtext.Escape(p))
		}
		for _, p := range c.Ask {
			fmt.Fprintf(w, "    - ask   %s (no longer asks)\n", termtext.Escape(p))
		}
	}
}
