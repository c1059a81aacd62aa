package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newTrustCmd) }

// newTrustCmd records that the user trusts a project. Until then the
// project's .freecode/settings*.json can only restrict (their allow rules
// are ignored): a cloned repository is untrusted input.
func newTrustCmd(a *app) *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{
		Use:   "trust [project-dir]",
		Short: "Trust a project's permission rules (default: the current directory)",
		Long: `Trust a project so that the allow rules in its .freecode/settings.json and
.freecode/settings.local.json apply. Before that, a project's files can only
deny or ask, never allow. Trust is recorded by the project's real path in your
config file; --revoke takes it back.`,
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
			if err := config.SetTrusted(path, abs, !revoke); err != nil {
				return unchanged(err)
			}
			out, shown := cmd.OutOrStdout(), termtext.Escape(abs)
			if revoke {
				fmt.Fprintf(out, "No longer trusting %s: its allow rules are ignored again.\n", shown)
			} else {
				fmt.Fprintf(out, "Trusting %s: the allow rules in its .freecode settings now apply.\n", shown)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "stop trusting the project")
	return cmd
}
