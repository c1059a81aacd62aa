package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/manifest"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/workspace"
)

// reviewFlags are the actions of `freecode mcp review`.
type reviewFlags struct {
	accept  string
	all     bool
	reject  string
	project string
}

// newMCPReviewCmd is `freecode mcp review`: the tool definitions that
// changed since the user accepted them, or are new, from the servers'
// manifests, and their acceptance or rejection. It connects nothing: a
// manifest holds what its server last listed, in this process or another.
func newMCPReviewCmd(a *app) *cobra.Command {
	var f reviewFlags
	cmd := &cobra.Command{
		Use:   "review [server]",
		Short: "Review MCP tool definitions that changed since you accepted them",
		Long: `FreeCode pins the definitions of each server's tools (name, title, description,
schemas, annotations) the first time it lists them. When a server later lists a
different definition, the tool is marked changed: models keep being shown the
definition you accepted, a readOnlyHint that turned true does not take effect,
and every call asks, whatever your allow rules say, with the change shown.
A tool that appears on a server already pinned is marked new.

Without a flag, shows what awaits review: descriptions as word diffs
([-removed-]{+added+}), schemas by JSON pointer, annotations as old → new.
--accept TOOL (or --all) makes the listed definition the accepted one;
--reject TOOL keeps the accepted one and blocks the listed one until the server
changes it again. A running sidecar applies the result at once: it watches the
servers' manifests, where pins are kept.

Servers with "pinning": "off" are never reviewed.`,
		Example: `  freecode mcp review
  freecode mcp review github --accept create_issue
  freecode mcp review github --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			actions := 0
			for _, set := range []bool{f.accept != "", f.all, f.reject != ""} {
				if set {
					actions++
				}
			}
			if actions > 1 {
				return errors.New("give one of --accept, --all and --reject")
			}
			if actions == 1 && len(args) == 0 {
				return errors.New("name the server whose tools to accept or reject")
			}
			servers, root, store, err := a.reviewServers(f.project)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				i := slices.IndexFunc(servers, func(s config.Server) bool { return s.Name == args[0] })
				if i < 0 {
					cfg, path, _ := a.load()
					return unknownServer(cfg, path, args[0])
				}
				servers = servers[i : i+1]
			}
			out := cmd.OutOrStdout()
			if actions == 0 {
				return showReviews(out, store, root, servers, len(args) == 1)
			}
			return reviewAction(cmd.Context(), out, store, root, servers[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.accept, "accept", "", "accept the listed definition of `TOOL`")
	fl.BoolVar(&f.all, "all", false, "accept the listed definitions of every tool of the server")
	fl.StringVar(&f.reject, "reject", "", "reject the listed definition of `TOOL`, keeping the accepted one")
	fl.StringVar(&f.project, "project", "", "project directory for project servers (default: the current directory)")
	return cmd
}

// reviewServers returns the servers whose manifests may be reviewed: the
// config file's and the project's approved ones, with the project's root
// and the manifest store beside the config file.
func (a *app) reviewServers(project string) ([]config.Server, string, *manifest.Store, error) {
	cfg, path, err := a.load()
	if err != nil {
		return nil, "", nil, err
	}
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return nil, "", nil, err
		}
	}
	if project, err = filepath.Abs(project); err != nil {
		return nil, "", nil, err
	}
	servers := slices.Clone(cfg.MCP.Servers)
	// At the home directory, the project's file is the user's own.
	if ps, err := config.LoadProject(project); err == nil && !config.ProjectSettingsAreUsers(project, path) {
		for _, s := range ps {
			if _, shadowed := cfg.Server(s.Name); !shadowed && cfg.Approved(config.ApprovalKey(project, s)) {
				servers = append(servers, s)
			}
		}
	}
	store := manifest.NewStore(filepath.Join(filepath.Dir(path), workspace.ManifestDir), nil)
	return servers, project, store, nil
}

// showReviews prints what awaits review; named says a server was named,
// so its having nothing to review is said about it.
func showReviews(out io.Writer, store *manifest.Store, root string, servers []config.Server, named bool) error {
	total := 0
	for _, s := range servers {
		name := termtext.Escape(s.Name)
		if s.PinningOff {
			if named {
				fmt.Fprintf(out, "%s: pinning is off; its definitions are taken as they come.\n", name)
			}
			continue
		}
		key, _ := workspace.ManifestKey(context.Background(), store, root, s)
		m, err := store.Load(key)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if named {
				fmt.Fprintf(out, "%s: no manifest yet: it has not listed its tools since FreeCode began pinning them.\n", name)
			}
			continue
		case err != nil:
			fmt.Fprintf(out, "%s: %s\n", name, termtext.Escape(err.Error()))
			continue
		}
		var pending, rejected []manifest.ToolStatus
		for _, st := range m.Statuses() {
			switch {
			case st.NeedsReview():
				pending = append(pending, st)
			case st.Rejected:
				rejected = append(rejected, st)
			}
		}
		if len(pending) == 0 && len(rejected) == 0 {
			if named {
				fmt.Fprintf(out, "%s: nothing to review; every tool is as you accepted it.\n", name)
			}
			continue
		}
		total += len(pending)
		if len(pending) > 0 {
			fmt.Fprintf(out, "%s: %d %s to review\n", name, len(pending), plural(len(pending), "tool", "tools"))
		} else {
			fmt.Fprintf(out, "%s: nothing to review\n", name)
		}
		for _, st := range pending {
			writeChange(out, st)
		}
		for _, st := range rejected {
			fmt.Fprintf(out, "  %s: rejected (calls are denied until the server changes it or you accept it)\n", termtext.Escape(st.Name))
		}
	}
	if total == 0 && !named {
		fmt.Fprintln(out, "No tool definitions to review.")
	}
	if total > 0 {
		fmt.Fprintln(out, "Accept with `freecode mcp review SERVER --accept TOOL` (or --all); reject with --reject TOOL.")
	}
	return nil
}

// writeChange prints a tool's change, indented, escaped: it is the
// server's text.
func writeChange(out io.Writer, st manifest.ToolStatus) {
	c := manifest.Diff(st.Pinned, st.Current)
	if !st.Changed {
		c = manifest.Diff(nil, st.Current)
	}
	for line := range strings.Lines(c.Text()) {
		fmt.Fprintf(out, "  %s\n", termtext.Escape(strings.TrimSuffix(line, "\n")))
	}
}

// reviewAction accepts or rejects as f says, and says what it did.
func reviewAction(ctx context.Context, out io.Writer, store *manifest.Store, root string, s config.Server, f reviewFlags) error {
	if s.PinningOff {
		return fmt.Errorf("%s has pinning off: there is nothing to accept or reject", s.Name)
	}
	tool, verb := f.accept, "Accepted"
	if f.reject != "" {
		tool, verb = f.reject, "Rejected"
	}
	var shown []manifest.ToolStatus
	key, _ := workspace.ManifestKey(ctx, store, root, s)
	_, err := store.Update(ctx, key, func(m *manifest.Manifest, corrupt error) error {
		if corrupt != nil || !m.Pinned {
			return fmt.Errorf("%s has no manifest yet: it has not listed its tools since FreeCode began pinning them", s.Name)
		}
		for _, st := range m.Statuses() {
			if st.NeedsReview() && (tool == "" || st.Name == tool) || f.accept != "" && st.Name == tool {
				shown = append(shown, st)
			}
		}
		switch {
		case f.reject != "":
			return m.Reject(tool, "")
		default:
			return m.Accept(tool, "")
		}
	})
	if err != nil {
		return err
	}
	if len(shown) == 0 {
		fmt.Fprintf(out, "%s: nothing awaited review.\n", termtext.Escape(s.Name))
		return nil
	}
	for _, st := range shown {
		fmt.Fprintf(out, "%s %s of %s:\n", verb, termtext.Escape(st.Name), termtext.Escape(s.Name))
		if st.NeedsReview() {
			writeChange(out, st)
		}
	}
	return nil
}
