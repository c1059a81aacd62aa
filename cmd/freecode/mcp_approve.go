package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/workspace"
	"github.com/spf13/cobra"
)

// newMCPApproveCmd approves (or revokes) a server that a project ships in
// its .freecode/settings.json. Such a server never starts before the user
// approved that exact entry: a cloned repository is untrusted input, and an
// entry could run any command or send ${env:…} secrets anywhere. The user
// approves what they were shown: the entry read once, shown whole, and
// confirmed on the terminal, or named by the hash the listing printed, so
// that a repository that rewrites the entry in between gets nothing.
func newMCPApproveCmd(a *app) *cobra.Command {
	var project, hash string
	var revoke bool
	cmd := &cobra.Command{
		Use:   "approve [name]",
		Short: "Approve a project's MCP server (no name: list them)",
		Long: `A project may ship MCP servers in .freecode/settings.json. None of them starts
until you approve that exact entry: the approval is stored in your config file
under the project's path and a hash of the entry, so any later change to its
command, URL, env, headers, cwd, TLS files, OAuth settings, or how it runs and
is checked (start, deferTools, timeouts, maxMessageBytes, protocolVersion)
needs approval again. A project cannot turn pinning off. Tool definitions its
server listed when it last ran that still await review are shown beside it.

Without a name, lists the project's servers, each with everything approving it
would allow and its hash. With a name, shows the entry and asks on the terminal;
without a terminal, give the hash the listing printed with --hash: the entry is
approved only if it still has that hash.`,
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
			out := cmd.OutOrStdout()
			store := manifest.NewStore(filepath.Join(filepath.Dir(path), workspace.ManifestDir), nil)
			show := func(s config.Server) {
				describeProjectServer(out, approvalOf(cmd.Context(), store, dir, s))
			}
			if config.ProjectSettingsAreUsers(dir, path) {
				fmt.Fprintf(out, "%s is your own settings file (the project is your home directory): not a project's: nothing in it awaits approval.\n",
					termtext.Escape(config.ProjectSettingsPath(dir)))
				if len(args) > 0 {
					return exitError(1)
				}
				return nil
			}
			servers, err := config.LoadProject(dir)
			if err != nil {
				return err
			}
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
					show(s)
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
			// Read once: what is shown, checked and approved is this
			// entry, whatever the file says by the time the user answers.
			srv := servers[i]
			key := config.ApprovalKey(dir, srv)
			if revoke {
				if err := config.Unapprove(path, key); err != nil {
					return unchanged(err)
				}
				fmt.Fprintf(out, "Revoked approval of project server %q from %s.\n", srv.Name, termtext.Escape(dir))
				return nil
			}
			switch got := config.EntryHash(srv); {
			case hash != "" && hash != got:
				show(srv)
				return fmt.Errorf("project server %q in %s changed since it was shown: its hash is now %s, not %s; nothing was approved (read the entry above, then approve it by its new hash)",
					srv.Name, config.ProjectSettingsPath(dir), got, hash)
			case hash == "" && !isTerminal(cmd.InOrStdin()):
				show(srv)
				return fmt.Errorf("nothing was approved: read the entry above, then approve it by its hash with --hash %s", got)
			case hash == "":
				fmt.Fprintf(out, "Project server %q from %s would be allowed to:\n", srv.Name, termtext.Escape(dir))
				show(srv)
				fmt.Fprint(out, "Approve this entry? [y/N] ")
				answer, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					fmt.Fprintln(out, "Not approved.")
					return exitError(1)
				}
			}
			if err := config.Approve(path, key); err != nil {
				return unchanged(err)
			}
			fmt.Fprintf(out, "Approved project server %q from %s:\n", srv.Name, termtext.Escape(dir))
			show(srv)
			fmt.Fprintln(out, "Any change to this entry needs approval again.")
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "project directory (default: the current directory)")
	cmd.Flags().StringVar(&hash, "hash", "", "approve the entry only if it still has this hash (as the listing printed it)")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "take the approval back")
	return cmd
}

// approvalOf returns what approving the project server s covers
// (mcp.ApprovalOf), with the definitions its manifest holds that await
// review, as the sidecar shows them.
func approvalOf(ctx context.Context, store *manifest.Store, dir string, s config.Server) *mcp.Approval {
	a := mcp.ApprovalOf(s)
	key, _ := workspace.ManifestKey(ctx, store, dir, s)
	if m, err := store.Load(key); err == nil {
		a.Pending = m.Pending()
	}
	return a
}

// describeProjectServer prints what approving a project server lets the
// project do: all that its approval covers (mcp.ApprovalOf), the hash that
// names it, and what awaits review from its last run. Unlike the user's
// own entries, env and header values are shown as written: they are the
// repository's text, and a ${env:NAME} there is exactly what the user must
// see (the project asks for that variable of theirs). Being the
// repository's text, they are shown escaped (internal/termtext): an escape
// sequence, a carriage return or a bidirectional control in a command
// could otherwise hide what it really runs from the very listing the user
// approves it by.
func describeProjectServer(w io.Writer, a *mcp.Approval) {
	line := func(label, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %-11s%s\n", label+":", termtext.Escape(v))
		}
	}
	// How it runs: labels as the keys of the file, too long to align.
	setting := func(key, v string) { fmt.Fprintf(w, "  %s: %s\n", key, termtext.Escape(v)) }
	if len(a.Command) > 0 {
		line("command", quoteArgv(a.Command))
		line("cwd", a.Cwd)
		if a.InheritEnv {
			fmt.Fprintln(w, "  inheritEnv: true (it gets your whole environment, API keys included)")
		}
		line("sandbox", a.Sandbox)
	} else {
		line("url", a.URL)
		line("transport", a.Transport)
	}
	if a.Registry != nil {
		line("registry", describeRegistry(a.Registry))
	}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		line("env", k+"="+a.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(a.Headers)) {
		line("header", k+": "+a.Headers[k])
	}
	line("caBundle", a.CABundle)
	line("clientCert", a.ClientCert)
	line("clientKey", a.ClientKey)
	if o := a.OAuth; o != nil {
		for _, f := range [][2]string{
			{"clientId", o.ClientID}, {"clientSecret", o.ClientSecret}, {"clientMetadataUrl", o.ClientMetadataURL},
			{"scopes", strings.Join(o.Scopes, " ")}, {"callbackPort", strconv.Itoa(o.CallbackPort)},
		} {
			if f[1] != "" && f[1] != "0" {
				line("oauth", f[0]+"="+f[1])
			}
		}
	}
	if a.Start != "" {
		setting("start", a.Start+" (at the first call of one of its tools)")
	}
	if a.DeferTools != nil {
		setting("deferTools", strconv.FormatBool(*a.DeferTools))
	}
	for _, f := range []struct {
		key  string
		n    int64
		unit string
	}{
		{"timeout", a.TimeoutMs, " ms"}, {"toolTimeout", a.ToolTimeoutMs, " ms"}, {"idleTimeout", a.IdleTimeoutMs, " ms"},
		{"maxMessageBytes", int64(a.MaxMessageBytes), ""},
	} {
		if f.n != 0 {
			setting(f.key, strconv.FormatInt(f.n, 10)+f.unit)
		}
	}
	if a.ProtocolVersion != "" {
		setting("protocolVersion", a.ProtocolVersion)
	}
	fmt.Fprintf(w, "  hash:      %s\n", a.EntryHash)
	if len(a.Pending) > 0 {
		fmt.Fprintf(w, "  awaiting review from its last run (these still ask after approval):\n")
		for _, c := range a.Pending {
			for l := range strings.Lines(c.Text()) {
				fmt.Fprintf(w, "    %s\n", termtext.Escape(strings.TrimSuffix(l, "\n")))
			}
		}
	}
}
