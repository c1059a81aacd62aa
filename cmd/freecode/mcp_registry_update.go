package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/registry"
	"github.com/freecode/freecode/internal/registry/install"
	"github.com/freecode/freecode/internal/termtext"
)

// installed is an entry installed from the registry, and the file it is in.
type installed struct {
	srv  config.Server
	path string
}

// installedEntries returns the entries with a registry block: the user's
// config's, then the project's (the working directory's) settings'.
func (a *app) installedEntries() ([]installed, error) {
	cfg, path, err := a.load()
	if err != nil {
		return nil, err
	}
	var out []installed
	for _, s := range cfg.MCP.Servers {
		if s.Registry != nil && s.Scope == config.ScopeUser {
			out = append(out, installed{s, path})
		}
	}
	dir, err := os.Getwd()
	if err != nil || config.ProjectSettingsAreUsers(dir, path) {
		return out, nil
	}
	project, err := config.LoadProject(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, s := range project {
		if s.Registry != nil {
			out = append(out, installed{s, config.ProjectSettingsPath(dir)})
		}
	}
	return out, nil
}

// entryClient returns the client of the registry an entry is asked about:
// the managed one, else --registry, else the registry it was installed
// from.
func (a *app) entryClient(flag string, r *config.Registry) (*registry.Client, error) {
	return a.registryClient(flag, r.URL)
}

// outdated is what `freecode mcp outdated` says of one entry.
type outdated struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	Server    string `json:"server"` // the registry's name of it
	Registry  string `json:"registry"`
	Installed string `json:"installed"`
	Latest    string `json:"latest,omitempty"`
	// Status is the installed version's: active, deprecated or deleted,
	// or "unknown" when the registry has it not.
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// Changes are what the latest version's server.json changes of how
	// the entry runs (serverChanges), when it is another version.
	Changes []string `json:"changes"`
	Error   string   `json:"error,omitempty"`
}

func newMCPOutdatedCmd(a *app) *cobra.Command {
	var reg string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "outdated",
		Short: "List the servers installed from the MCP Registry that have a newer version",
		Long: `List every server installed from the MCP Registry (the user's config and this project's
settings): its version, the registry's latest, the installed version's status (deprecated or
deleted by its publisher), and what the latest version's server.json changes of how it runs:
its package and version, transport, required values added or removed, remote URL.

Each is asked of the registry it was installed from, or of --registry (the managed settings'
registry.url, if set, over both). Nothing is changed:
` + "`freecode mcp update NAME`" + ` updates one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if reg != "" {
				// A --registry the policy refuses is the command's error,
				// not each row's.
				if _, err := a.registryClient(reg, ""); err != nil {
					return err
				}
			}
			entries, err := a.installedEntries()
			if err != nil {
				return err
			}
			rows := make([]outdated, 0, len(entries))
			for _, e := range entries {
				rows = append(rows, a.checkOutdated(cmd.Context(), reg, e.srv))
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			printOutdated(out, rows)
			return nil
		},
	}
	cmd.Flags().StringVar(&reg, "registry", "", "the registry's `URL` (default each server's own)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the servers as JSON")
	return cmd
}

// checkOutdated asks the registry about srv; a failure is in the row.
func (a *app) checkOutdated(ctx context.Context, flag string, srv config.Server) outdated {
	r := srv.Registry
	row := outdated{Name: srv.Name, Scope: srv.Scope, Server: r.Name, Registry: r.URL, Installed: r.Version, Status: "unknown", Changes: []string{}}
	c, err := a.entryClient(flag, r)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	row.Registry = c.URL()
	var old *registry.Server
	switch cur, err := c.Get(ctx, r.Name, r.Version); {
	case err == nil:
		row.Status, row.StatusMessage = cur.Status(), install.StatusMessage(cur)
		old = &cur.Server
	case !errors.Is(err, registry.ErrNotFound):
		row.Error = err.Error()
		return row
	}
	latest, err := c.Get(ctx, r.Name, "latest")
	if errors.Is(err, registry.ErrNotFound) {
		row.Error = "the registry has no version of it"
		return row
	}
	if err != nil {
		row.Error = err.Error()
		return row
	}
	row.Latest = latest.Server.Version
	if row.Latest != r.Version {
		row.Changes = nonNilStrings(serverChanges(old, &latest.Server, runKind(srv)))
	}
	return row
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func printOutdated(out io.Writer, rows []outdated) {
	if len(rows) == 0 {
		fmt.Fprintln(out, "No server here was installed from the MCP Registry (`freecode mcp install` installs one).")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSERVER\tINSTALLED\tLATEST\tSTATUS")
	for _, r := range rows {
		status := r.Status
		switch {
		case r.Error != "":
			status = "error: " + r.Error
		case r.Status == "unknown":
			status = "not in the registry"
		case r.StatusMessage != "":
			status += ": " + r.StatusMessage
		}
		latest := cmp.Or(r.Latest, "?")
		if r.Latest == r.Installed {
			latest += " (up to date)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Escape(r.Name), termtext.Escape(r.Server), termtext.Escape(r.Installed),
			termtext.Escape(latest), termtext.EscapeLines(status))
	}
	tw.Flush()
	n := 0
	for _, r := range rows {
		if r.Latest == "" || r.Latest == r.Installed {
			continue
		}
		n++
		fmt.Fprintf(out, "\n%s %s → %s:\n", termtext.Escape(r.Name), termtext.Escape(r.Installed), termtext.Escape(r.Latest))
		if len(r.Changes) == 0 {
			fmt.Fprintln(out, "  runs as before, but for its version")
		}
		for _, c := range r.Changes {
			fmt.Fprintf(out, "  %s\n", termtext.Escape(c))
		}
	}
	if n > 0 {
		fmt.Fprintln(out, "\nUpdate one with `freecode mcp update NAME`; its new tool definitions wait for your review.")
	}
}

// runKind is how an installed entry runs: npm, pypi, oci or remote ("" for
// a command install does not write).
func runKind(srv config.Server) string {
	if srv.Type == config.TypeRemote {
		return "remote"
	}
	if len(srv.Command) == 0 {
		return ""
	}
	switch filepath.Base(srv.Command[0]) {
	case "npx":
		return registry.TypeNPM
	case "uvx":
		return registry.TypePyPI
	case "docker":
		return registry.TypeOCI
	}
	return ""
}

// packageOf returns s's stdio package of that kind, or nil.
func packageOf(s *registry.Server, kind string) *registry.Package {
	for i := range s.Packages {
		if p := &s.Packages[i]; p.RegistryType == kind && p.Transport.Type == "stdio" {
			return p
		}
	}
	return nil
}

// remoteOf returns s's first remote FreeCode can reach, or nil.
func remoteOf(s *registry.Server) *registry.Transport {
	for i := range s.Remotes {
		if t := &s.Remotes[i]; t.Type == "streamable-http" || t.Type == "sse" {
			return t
		}
	}
	return nil
}

// serverChanges is what the server.json next changes of how an entry
// installed from old as kind runs, a line each: its package or remote URL,
// transport, and the required values added or removed. old nil: the
// installed version's server.json is not in the registry to compare.
func serverChanges(old, next *registry.Server, kind string) []string {
	if old == nil {
		return []string{"the installed version is not in the registry: nothing to compare with"}
	}
	var out []string
	var before, after []string // required values
	switch kind {
	case "remote":
		o, n := remoteOf(old), remoteOf(next)
		if n == nil {
			return []string{"no remote any more (it offers: " + strings.Join(registry.Runs(next), ", ") + ")"}
		}
		if o == nil {
			return nil
		}
		if o.URL != n.URL {
			out = append(out, "url: "+o.URL+" → "+n.URL)
		}
		if o.Type != n.Type {
			out = append(out, "transport: "+o.Type+" → "+n.Type)
		}
		before, after = remoteRequired(o), remoteRequired(n)
	case registry.TypeNPM, registry.TypePyPI, registry.TypeOCI:
		o, n := packageOf(old, kind), packageOf(next, kind)
		if n == nil {
			return []string{"no " + kind + " package any more (it offers: " + strings.Join(registry.Runs(next), ", ") + ")"}
		}
		if o == nil {
			return nil
		}
		if o.Identifier != n.Identifier || o.Version != n.Version {
			out = append(out, fmt.Sprintf("package: %s %s → %s %s", kind, packageRef(o), kind, packageRef(n)))
		}
		if o.Transport.Type != n.Transport.Type {
			out = append(out, "transport: "+o.Transport.Type+" → "+n.Transport.Type)
		}
		before, after = packageRequired(o), packageRequired(n)
	default:
		return nil
	}
	for _, r := range after {
		if !slices.Contains(before, r) {
			out = append(out, "requires "+r+" (new)")
		}
	}
	for _, r := range before {
		if !slices.Contains(after, r) {
			out = append(out, "no longer requires "+r)
		}
	}
	return out
}

func packageRef(p *registry.Package) string {
	if p.Version == "" || strings.Contains(p.Identifier, "@sha256:") {
		return p.Identifier
	}
	return p.Identifier + " " + p.Version
}

// packageRequired names the required values of p: its environment
// variables, and its arguments as "argument NAME".
func packageRequired(p *registry.Package) []string {
	var out []string
	for _, list := range [][]registry.Argument{p.RuntimeArguments, p.PackageArguments} {
		for _, a := range list {
			if a.IsRequired && a.Value == "" {
				out = append(out, "argument "+cmp.Or(a.ValueHint, strings.TrimLeft(a.Name, "-")))
			}
		}
	}
	for _, e := range p.EnvironmentVariables {
		if e.IsRequired {
			out = append(out, e.Name)
		}
	}
	return out
}

// remoteRequired names the required values of t: its headers, and its
// URL's variables as "URL variable NAME".
func remoteRequired(t *registry.Transport) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(t.Variables)) {
		if t.Variables[k].IsRequired {
			out = append(out, "URL variable "+k)
		}
	}
	for _, h := range t.Headers {
		if h.IsRequired {
			out = append(out, "header "+h.Name)
		}
	}
	return out
}

func newMCPUpdateCmd(a *app) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "update NAME",
		Short: "Update a server installed from the MCP Registry to its latest version",
		Long: `Rewrite the entry of a server installed from the MCP Registry to the registry's latest version,
run the same way as installed (npm, PyPI, OCI or remote; --runs chooses another), keeping the
entry's environment and header values, arguments and URL variables, and asking only for what
the new version newly requires. Its other settings stay as they are.

The entry keeps its name, and so its pinned tool definitions: at its next start, every tool
the new version defines otherwise, or adds, waits for your review (` + "`freecode mcp review`" + `).
A project's entry awaits approval again, its registry block having changed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.update(cmd, args[0], &f) },
	}
	cmd.Flags().StringVar(&f.registry, "registry", "", "the registry's `URL` (default the one it was installed from)")
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "a value the new version asks for, `NAME=VALUE`")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "ask nothing: keep the entry's values, use --var and defaults, and fail on a required value without one")
	cmd.Flags().StringVar(&f.runs, "runs", "", "run it another way: npm, pypi, oci or remote (default as installed)")
	return cmd
}

func (a *app) update(cmd *cobra.Command, name string, f *installFlags) error {
	ctx := cmd.Context()
	entries, err := a.installedEntries()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(entries, func(e installed) bool { return e.srv.Name == name })
	if i < 0 {
		return fmt.Errorf("no server %q here was installed from the MCP Registry (`freecode mcp outdated` lists those that were)", name)
	}
	e := entries[i]
	r := e.srv.Registry
	c, err := a.entryClient(f.registry, r)
	if err != nil {
		return err
	}
	latest, err := getVersion(ctx, c, r.Name, "latest", cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if latest.Server.Version == r.Version {
		fmt.Fprintf(out, "%s is at %s %s, the latest: nothing to update.\n", termtext.Escape(name), termtext.Escape(r.Name), termtext.Escape(r.Version))
		return nil
	}
	var old *registry.Server
	if cur, err := c.Get(ctx, r.Name, r.Version); err == nil {
		old = &cur.Server
	}
	kind := runKind(e.srv)
	in, err := newInstallInput(cmd, f)
	if err != nil {
		return err
	}
	in.in.OldEnv, in.in.OldHeaders, in.in.Kept = e.srv.Env, e.srv.Headers, keptValues(e.srv, old, kind)
	srv := e.srv
	srv.Command, srv.Env, srv.URL, srv.Headers, srv.Transport = nil, nil, "", nil, ""
	plan, err := in.build(ctx, srv, &latest.Server, c.URL(), cmp.Or(f.runs, kind))
	if err != nil {
		return err
	}
	if err := saveSecrets(ctx, plan); err != nil {
		return err
	}
	srv = plan.Server
	if err := config.UpdateInstalled(e.path, srv); err != nil {
		return unchanged(plan.Unwritten(err))
	}
	fmt.Fprintf(out, "✓ Updated %s from %s %s to %s in %s\n", termtext.Escape(name), termtext.Escape(r.Name), termtext.Escape(r.Version),
		termtext.Escape(latest.Server.Version), e.path)
	for _, ch := range serverChanges(old, &latest.Server, runKind(srv)) {
		fmt.Fprintf(out, "  %s\n", termtext.Escape(ch))
	}
	report(out, plan)
	switch {
	case srv.PinningOff:
		fmt.Fprintf(out, "  Pinning is off for %s: the new version's tool definitions will be used as it lists them, unreviewed.\n", termtext.Escape(name))
	default:
		fmt.Fprintf(out, "  Its tool definitions are checked at its next start: any the new version changes or adds wait for your review (`freecode mcp review %s`).\n", termtext.Escape(name))
	}
	if srv.Scope == config.ScopeProject {
		fmt.Fprintf(out, "  A project's changed entry runs once approved again: `freecode mcp approve %s`.\n", termtext.Escape(name))
	}
	return nil
}

// keptValues recovers from an installed entry the values install wrote
// into its command line and URL, by name as old's server.json names them:
// its package's arguments (after the package in the command) and its
// remote URL's variables. Its env and headers are kept whole elsewhere.
func keptValues(srv config.Server, old *registry.Server, kind string) map[string]string {
	out := map[string]string{}
	if old == nil {
		return out
	}
	if kind == "remote" {
		t := remoteOf(old)
		if t == nil {
			return out
		}
		// QuoteMeta writes {name} as \{name\}: each becomes a group.
		var names []string
		re := regexp.MustCompile(`\\\{([A-Za-z_][A-Za-z0-9_]*)\\\}`).ReplaceAllStringFunc(regexp.QuoteMeta(t.URL), func(m string) string {
			names = append(names, m[2:len(m)-2])
			return "(.*?)"
		})
		re = "^" + re + "$"
		if m := regexp.MustCompile(re).FindStringSubmatch(srv.URL); m != nil {
			for i, n := range names {
				out[n] = m[i+1]
			}
		}
		return out
	}
	p := packageOf(old, kind)
	if p == nil {
		return out
	}
	argv := srv.Command
	start := slices.IndexFunc(argv, func(a string) bool {
		repo, _, _ := strings.Cut(p.Identifier, "@sha256:")
		if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
			repo = repo[:i]
		}
		return strings.HasPrefix(a, repo) && a != repo || a == p.Identifier
	})
	if start < 0 {
		return out
	}
	j := start + 1
	for _, a := range p.PackageArguments {
		label := cmp.Or(a.ValueHint, strings.TrimLeft(a.Name, "-"))
		switch {
		case a.Type == "named" && j+1 < len(argv) && argv[j] == a.Name:
			out[label] = argv[j+1]
			j += 2
		case a.Type == "positional" && j < len(argv):
			out[label] = argv[j]
			j++
		}
	}
	return out
}
