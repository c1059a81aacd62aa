package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/install"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/spf13/cobra"
)

// registryClient returns a client of the registry the managed settings
// fix, else the one --registry (flag) names, else entry (the registry an
// installed server came from), else mcp.registry.url, else the public
// one; a config that does not load is refused, not taken for the public
// registry. A --registry other than the managed one is refused, naming the
// file that fixes it; a managed policy that does not load refuses every
// registry, as it starts no server.
func (a *app) registryClient(flag, entry string) (*registry.Client, error) {
	c, err := install.Client(install.Source{Asked: flag, Entry: entry, Configured: func() (string, error) {
		cfg, _, err := a.load()
		if err != nil {
			return "", err
		}
		return cfg.MCP.RegistryURL, nil
	}})
	if re := (*install.RefusedError)(nil); errors.As(err, &re) {
		return nil, fmt.Errorf("--registry %w", err)
	}
	return c, err
}

func newMCPSearchCmd(a *app) *cobra.Command {
	var reg string
	var asJSON, refresh bool
	cmd := &cobra.Command{
		Use:   "search [QUERY]",
		Short: "Search the MCP Registry for servers",
		Long: `Search the MCP Registry's servers (their latest versions) by name, title and description.
The registry's list is fetched once, page by page, and kept in the user's cache directory
for an hour; searches read it there. --refresh fetches it again.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.registryClient(reg, "")
			if err != nil {
				return err
			}
			ix, err := c.Index(cmd.Context(), refresh)
			if err != nil {
				return err
			}
			query := ""
			if len(args) > 0 {
				query = args[0]
			}
			found := ix.Search(query)
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(nonNilEntries(found))
			}
			if len(found) == 0 {
				fmt.Fprintf(out, "No server of %s matches %q.\n", c.URL(), query)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tRUNS\tDESCRIPTION")
			for _, e := range found {
				desc := e.Description
				if e.Title != "" {
					desc = e.Title + ": " + desc
				}
				version := e.Version
				if e.Status != "" {
					version += " (" + e.Status + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", termtext.Escape(e.Name), termtext.Escape(version),
					strings.Join(e.Runs, ","), termtext.Escape(desc))
			}
			tw.Flush()
			fmt.Fprintf(out, "\nInstall one with `freecode mcp install NAME[@VERSION]`.\n")
			return nil
		},
	}
	cmd.Flags().StringVar(&reg, "registry", "", "the registry's `URL` (default mcp.registry.url, else "+config.DefaultRegistryURL+"; a managed registry.url fixes it)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the servers found as JSON")
	cmd.Flags().BoolVar(&refresh, "refresh", false, "fetch the registry's list again, whatever the cache's age")
	return cmd
}

func nonNilEntries(e []registry.Entry) []registry.Entry {
	if e == nil {
		return []registry.Entry{}
	}
	return e
}

type installFlags struct {
	valuesStdin bool // --values-stdin
	listValues  bool // --list-values
	registry    string
	scope       string
	name        string
	vars        []string
	yes         bool
	runs        string
}

func newMCPInstallCmd(a *app) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "install NAME[@VERSION]",
		Short: "Install a server from the MCP Registry",
		Long: `Install a server from the MCP Registry: its server.json is read, a way to run it chosen
(an npm package through npx, a PyPI one through uvx, an OCI image through docker, or its remote
URL), and one entry written, pinned to the version installed (the latest when none is given,
written as the concrete version) with a "registry" block naming the registry, server, version
and digest.

Values the server needs are asked for, or given with --var NAME=VALUE. Secret values are typed
unseen (or read from standard input's lines) and kept in the secret store, the entry holding
${secret:NAME}; they are not accepted by --var, which a shell's history keeps.`,
		Example: `  freecode mcp search github
  freecode mcp install io.github.modelcontextprotocol/everything
  freecode mcp install io.example/weather@1.4.0 --var region=eu --scope project`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.install(cmd, args[0], &f) },
	}
	cmd.Flags().StringVar(&f.registry, "registry", "", "the registry's `URL` (default mcp.registry.url, else "+config.DefaultRegistryURL+"; a managed registry.url fixes it)")
	cmd.Flags().StringVar(&f.scope, "scope", "user", "where the entry goes: user (the config file) or project (./.freecode/settings.json)")
	cmd.Flags().StringVar(&f.name, "name", "", "the entry's name (default the registry name's last part)")
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "a value the server asks for, `NAME=VALUE` (an environment variable, argument or URL variable)")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "ask nothing: use --var and defaults, and fail on a required value without one")
	cmd.Flags().StringVar(&f.runs, "runs", "", "how to run it when it offers several: npm, pypi, oci or remote")
	cmd.Flags().BoolVar(&f.valuesStdin, "values-stdin", false, "read the values from standard input, one JSON object of `NAME` to value, secret ones too (kept in the secret store): for a program that asked them itself")
	cmd.Flags().BoolVar(&f.listValues, "list-values", false, "write nothing: print as JSON the values the install would ask for (after --var and --values-stdin)")
	return cmd
}

// askedValue is one value `install --list-values` says would be asked.
type askedValue = install.Value

func (a *app) install(cmd *cobra.Command, spec string, f *installFlags) error {
	ctx := cmd.Context()
	name, version, _ := strings.Cut(spec, "@")
	var path string
	switch f.scope {
	case "user":
		_, p, err := a.load()
		if err != nil {
			return unchanged(err)
		}
		path = p
	case "project":
		dir, err := os.Getwd()
		if err != nil {
			return err
		}
		path = config.ProjectSettingsPath(dir)
	default:
		return fmt.Errorf("--scope %q: want user or project", f.scope)
	}
	c, err := a.registryClient(f.registry, "")
	if err != nil {
		return err
	}
	r, err := getVersion(ctx, c, name, version, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	s := &r.Server
	in, err := newInstallInput(cmd, f)
	if err != nil {
		return err
	}
	srv := config.Server{Name: cmp.Or(f.name, install.EntryName(name)), Enabled: true}
	if err := config.CheckName(srv.Name); err != nil {
		return fmt.Errorf("%w (choose one with --name)", err)
	}
	plan, err := in.build(ctx, srv, s, c.URL(), f.runs)
	if err != nil {
		return err
	}
	if f.listValues {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(plan.Asked)
	}
	if err := saveSecrets(ctx, plan); err != nil {
		return err
	}
	if f.scope == "project" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return plan.Unwritten(err)
		}
	}
	srv = plan.Server
	if err := config.AddServer(path, srv); err != nil {
		return unchanged(plan.Unwritten(err))
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "✓ Installed %s %s as %s server %q in %s\n", termtext.Escape(s.Name), termtext.Escape(s.Version), srv.Type, srv.Name, path)
	report(out, plan)
	if f.scope == "project" {
		fmt.Fprintln(out, "  A project's servers run once approved: `freecode mcp approve "+srv.Name+"`.")
	}
	return nil
}

// getVersion returns the version of name the registry behind c has
// ("latest" or "" its latest), refusing a deleted one or one with no
// concrete version, and warning on stderr of a deprecated one.
func getVersion(ctx context.Context, c *registry.Client, name, version string, stderr io.Writer) (*registry.Response, error) {
	r, err := install.Get(ctx, c, name, version)
	if nf := (*install.NotFoundError)(nil); errors.As(err, &nf) && nf.Version == "latest" {
		return nil, fmt.Errorf("%w (`freecode mcp search` finds one)", err)
	}
	if err != nil {
		return nil, err
	}
	if r.Status() == registry.StatusDeprecated {
		fmt.Fprintf(stderr, "warning: %s %s is deprecated%s\n", termtext.Escape(name), termtext.Escape(r.Server.Version), termtext.EscapeLines(statusMessage(r)))
	}
	return r, nil
}

// statusMessage is ": " and the registry's message on a version's status,
// or "".
func statusMessage(r *registry.Response) string {
	if m := install.StatusMessage(r); m != "" {
		return ": " + m
	}
	return ""
}

// saveSecrets keeps the secret values typed in the secret store.
func saveSecrets(ctx context.Context, plan *install.Plan) error {
	if len(plan.SecretNames()) == 0 {
		return nil
	}
	store, err := openSecrets()
	if err != nil {
		return err
	}
	return plan.SaveSecrets(ctx, func(ctx context.Context, name, value string) error {
		_, err := store.Set(ctx, name, value)
		return err
	})
}

// report prints the entry written and the secrets saved.
func report(out io.Writer, plan *install.Plan) {
	describe(out, plan.Server)
	fmt.Fprintf(out, "  registry:  %s\n", termtext.Escape(describeRegistry(plan.Server.Registry)))
	for _, k := range plan.SecretNames() {
		fmt.Fprintf(out, "  secret %s saved in the secret store\n", k)
	}
}

// describeRegistry is an entry's registry identity in a line.
func describeRegistry(r *config.Registry) string {
	s := r.Name + "@" + r.Version + " from " + r.URL
	if r.Digest != "" {
		s += " (" + r.Digest + ")"
	}
	return s
}
