package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/spf13/cobra"
)

// newMCPApproveCmd approves (or revokes) a server that a project ships in
// its .freecode/settings.json. Such a server never starts before the user
// approved that exact entry: a cloned repository is untrusted input, and an
// entry could run any command or send ${env:…} secrets anywhere.
func newMCPApproveCmd(a *app) *cobra.Command {
	var project string
	var revoke bool
	cmd := &cobra.Command{
		Use:   "approve [name]",
		Short: "Approve a project's MCP server (no name: list them)",
		Long: `A project may ship MCP servers in .freecode/settings.json. None of them starts
until you approve that exact entry: the approval is stored in your config file
under the project's path and a hash of the entry, so any later change to its
command, URL, env or headers needs approval again.

Without a name, lists the project's servers and whether each is approved.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := a.load()
			if err != nil {
				return err
			}
			dir := project
			if dir == "" {
				if dir, err = os.Getwd(); err != nil {
					return err
				}
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			servers, err := config.LoadProject(dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				if len(servers) == 0 {
					fmt.Fprintf(out, "%s ships no MCP servers.\n", termtext.Escape(config.ProjectSettingsPath(dir)))
					return nil
				}
				for _, s := range servers {
					state := "awaiting approval"
					if cfg.Approved(config.ApprovalKey(dir, s)) {
						state = "approved"
					}
					if _, clash := cfg.Server(s.Name); clash {
						state += "; shadowed by your own server of that name"
					}
					fmt.Fprintf(out, "%s (%s)\n", termtext.Escape(s.Name), state)
					describeProjectServer(out, s)
				}
				return nil
			}
			i := slices.IndexFunc(servers, func(s config.Server) bool { return s.Name == args[0] })
			if i < 0 {
				names := make([]string, len(servers))
				for i, s := range servers {
					names[i] = s.Name
				}
				return fmt.Errorf("%s has no server named %q (it has: %s)", config.ProjectSettingsPath(dir), args[0], strings.Join(names, ", "))
			}
			srv := servers[i]
			key := config.ApprovalKey(dir, srv)
			if revoke {
				if err := config.Unapprove(path, key); err != nil {
					return unchanged(err)
				}
				fmt.Fprintf(out, "Revoked approval of project server %q from %s.\n", srv.Name, termtext.Escape(dir))
				return nil
			}
			if err := config.Approve(path, key); err != nil {
				return unchanged(err)
			}
			fmt.Fprintf(out, "Approved project server %q from %s:\n", srv.Name, termtext.Escape(dir))
			describeProjectServer(out, srv)
			fmt.Fprintln(out, "Any change to this entry needs approval again.")
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "project directory (default: the current directory)")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "take the approval back")
	return cmd
}

// describeProjectServer prints what approving s lets the project do. Unlike
// the user's own entries, env and header values are shown as written: they
// are the repository's text, and a ${env:NAME} there is exactly what the
// user must see (the project asks for that variable of theirs). Being the
// repository's text, they are shown escaped (internal/termtext): an escape
// sequence, a carriage return or a bidirectional control in a command
// could otherwise hide what it really runs from the very listing the user
// approves it by.
func describeProjectServer(w io.Writer, s config.Server) {
	if s.Type == config.TypeLocal {
		fmt.Fprintf(w, "  command:   %s\n", termtext.Escape(quoteArgv(s.Command)))
		if s.Cwd != "" {
			fmt.Fprintf(w, "  cwd:       %s\n", termtext.Escape(s.Cwd))
		}
		if s.InheritEnv {
			fmt.Fprintln(w, "  inheritEnv: true (it gets your whole environment, API keys included)")
		}
	} else {
		fmt.Fprintf(w, "  url:       %s\n", termtext.Escape(s.URL))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		fmt.Fprintf(w, "  env:       %s=%s\n", termtext.Escape(k), termtext.Escape(s.Env[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		fmt.Fprintf(w, "  header:    %s: %s\n", termtext.Escape(k), termtext.Escape(s.Headers[k]))
	}
}
