package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/telemetry"
)

func init() { subcommands = append(subcommands, newPolicyCmd) }

// newPolicyCmd is `freecode policy`: the organization's managed policy in
// force on this machine, each part with the file (and line) it comes from,
// and what it does to the servers of the user's config and the project.
func newPolicyCmd(a *app) *cobra.Command {
	var asJSON bool
	var project string
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Show the organization's managed policy and what it blocks",
		Long: `Show the managed policy in force on this machine: the servers it allows, denies or ships,
the permission rules no one else can loosen, the sandbox minimum, where the audit trail goes,
the MCP Registry it fixes, whether and where telemetry is exported, each with the file and line it comes from; then which of your servers (and, with --project,
the project's) it blocks, and why.

The policy is read from ` + config.ManagedDir() + ` (managed-settings.json, then
managed-settings.d/*.json in name order). Nothing a user or a project sets moves it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			m, err := config.LoadManaged()
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "✗ The managed settings do not load: %s\n  Until they do, no server starts (a policy that cannot be read is not taken for absent).\n", termtext.EscapeLines(err.Error()))
				return exitError(1)
			}
			servers, err := a.policyServers(project)
			if err != nil {
				return err
			}
			tel := a.telemetryInForce(m)
			if asJSON {
				return printPolicyJSON(out, m, servers, tel)
			}
			printPolicy(out, m)
			printTelemetryInForce(out, tel)
			printBlocked(out, m, servers)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the policy and the blocked servers as JSON")
	cmd.Flags().StringVar(&project, "project", "", "also check the servers of the project at `dir`")
	return cmd
}

// policyServers returns the servers the policy is checked against: the
// user's, and the project's at dir if set. A config that does not load
// is an error; a project file that does not load is skipped with a note.
func (a *app) policyServers(dir string) ([]config.Server, error) {
	cfg, _, err := a.load()
	if err != nil {
		return nil, err
	}
	servers := cfg.MCP.Servers
	if dir != "" {
		project, err := config.LoadProject(dir)
		if err != nil {
			return nil, fmt.Errorf("the project's servers: %w", err)
		}
		servers = append(servers, project...)
	}
	return servers, nil
}

// printPolicy writes the policy in force, part by part, each with where it
// comes from.
func printPolicy(w io.Writer, m *config.Managed) {
	if len(m.Files) == 0 {
		fmt.Fprintf(w, "No managed settings in %s: only your own settings apply.\n", termtext.Escape(config.ManagedDir()))
		return
	}
	fmt.Fprintln(w, "Managed settings, in the order they apply:")
	for _, f := range m.Files {
		note := ""
		if f.UserWritable {
			note = "  (writable by you: a policy you can change is not enforced against you)"
		}
		fmt.Fprintf(w, "  %s%s\n", termtext.Escape(f.Path), note)
	}
	switch {
	case m.Exclusive:
		fmt.Fprintln(w, "\nServers: only the organization's own may run (exclusive).")
	case m.Allowed != nil:
		fmt.Fprintln(w, "\nServers allowed (any other is blocked):")
		printMatches(w, m.Allowed)
		if len(m.Allowed) == 0 {
			fmt.Fprintln(w, "  none: an empty allowedMcpServers blocks every server but the organization's")
		}
	default:
		fmt.Fprintln(w, "\nServers allowed: any not denied.")
	}
	if len(m.Denied) > 0 {
		fmt.Fprintln(w, "Servers denied:")
		printMatches(w, m.Denied)
	}
	if len(m.Servers) > 0 {
		fmt.Fprintln(w, "The organization's servers (run for every user; a server of yours of the same name is shadowed):")
		for _, s := range m.Servers {
			fmt.Fprintf(w, "  %s (%s)\n", termtext.Escape(s.Name), s.Type)
			describe(indent{w}, s)
		}
	}
	if len(m.Permissions) > 0 || m.ManagedRulesOnly {
		fmt.Fprintln(w, "\nPermission rules (no user or project rule, nor \"always allow\", loosens a deny or ask):")
		for _, eff := range []string{"deny", "ask", "allow"} {
			for _, r := range m.Permissions {
				if r.Effect == eff {
					fmt.Fprintf(w, "  %-5s %-40s %s\n", eff, termtext.Escape(r.Pattern), at(r.Path, r.Line, r.Col))
				}
			}
		}
		if m.ManagedRulesOnly {
			fmt.Fprintln(w, "  Only these allow rules apply: yours and the project's are ignored (allowManagedPermissionRulesOnly).")
		}
	}
	if sb := m.Sandbox; sb.Require != "" || sb.AllowedDomains != nil || len(sb.DenyRead) > 0 {
		fmt.Fprintln(w, "\nSandbox minimum:")
		switch sb.Require {
		case config.RequireSandboxAll:
			fmt.Fprintln(w, "  every local server runs sandboxed")
		case config.RequireSandboxProject:
			fmt.Fprintln(w, "  every project server runs sandboxed")
		}
		if sb.AllowedDomains != nil {
			ceiling := "no network"
			if len(sb.AllowedDomains) > 0 {
				ceiling = strings.Join(sb.AllowedDomains, ", ")
			}
			fmt.Fprintf(w, "  a sandboxed server reaches at most: %s\n", termtext.Escape(ceiling))
		}
		if len(sb.DenyRead) > 0 {
			fmt.Fprintf(w, "  and cannot read: %s\n", termtext.Escape(strings.Join(sb.DenyRead, ", ")))
		}
	}
	if a := m.Audit; a.Dir != "" || a.Arguments || a.MaxFileBytes > 0 {
		fmt.Fprintln(w, "\nAudit trail:")
		if a.Dir != "" {
			fmt.Fprintf(w, "  kept in %s\n", termtext.Escape(a.Dir))
		}
		if a.Arguments {
			fmt.Fprintln(w, "  a call's argument values are recorded (redacted), not only their hash")
		}
		if a.MaxFileBytes > 0 {
			fmt.Fprintf(w, "  rotated at %d bytes\n", a.MaxFileBytes)
		}
	}
	if r := m.Registry; r.URL != "" {
		fmt.Fprintln(w, "\nMCP Registry:")
		fmt.Fprintf(w, "  search, install, outdated and update ask only %s (%s)\n", termtext.Escape(r.URL), r.Path)
	}
	printTelemetry(w, m.Telemetry)
	if m.Message != "" {
		fmt.Fprintf(w, "\nShown with every refusal: %s\n", termtext.Escape(m.Message))
	}
	if len(m.Problems) > 0 {
		fmt.Fprintln(w, "\nProblems (the rest applies):")
		for _, p := range m.Problems {
			level := "error"
			if p.Warning {
				level = "warning"
			}
			fmt.Fprintf(w, "  %s: %s: %s: %s\n", level, at(p.Path, p.Line, p.Col), termtext.Escape(p.Key), termtext.EscapeLines(p.Msg))
		}
	}
}

// printTelemetry writes the telemetry block, key by key with the file
// that set it; the headers by name, never their values.
func printTelemetry(w io.Writer, t config.ManagedTelemetry) {
	if t.Enabled == nil && t.Endpoint == "" && t.Protocol == "" && t.Headers == nil && t.Arguments == nil {
		return
	}
	fmt.Fprintln(w, "\nTelemetry (OpenTelemetry export of tool calls: traces, metrics, tool_decision events):")
	line := func(text, key string) {
		fmt.Fprintf(w, "  %-50s %s\n", text, termtext.Escape(t.From[key]))
	}
	switch {
	case t.Enabled == nil:
		fmt.Fprintln(w, "  not turned on or off here: your OTEL_* variables decide, and what follows is not used")
	case *t.Enabled:
		line("on, whatever your OTEL_* variables say", "enabled")
	default:
		line("off, whatever your OTEL_* variables say", "enabled")
	}
	if t.Endpoint != "" {
		line("sent to "+termtext.Escape(t.Endpoint), "endpoint")
	} else if t.Enabled != nil && *t.Enabled {
		fmt.Fprintln(w, "  sent to the endpoint of your OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if t.Protocol != "" {
		line("over "+termtext.Escape(t.Protocol), "protocol")
	}
	if t.Headers != nil {
		line("with the headers "+termtext.Escape(strings.Join(headerNames(t.Headers), ", "))+" (values not shown)", "headers")
	}
	switch {
	case t.Arguments == nil:
	case *t.Arguments:
		line("calls' arguments and results exported (redacted)", "arguments")
	default:
		line("calls' arguments and results never exported", "arguments")
	}
}

// telemetryInForce is what decides the export as things stand: the
// managed policy m, the user's mcp.telemetry, this process's OTEL_*
// variables (a header's references are not resolved: nothing is sent).
// The user's block is read whatever else the config file holds; one that
// cannot be read leaves it off unless the managed settings decide, as
// the sidecar does (telemetry.ResolveConfig).
func (a *app) telemetryInForce(m *config.Managed) telemetry.Settings {
	path, err := a.path()
	if err != nil {
		s, _ := telemetry.ResolveUser(m, nil, "", os.Getenv)
		return s
	}
	s, _ := telemetry.ResolveConfig(m, path, os.Getenv)
	return s
}

// printTelemetryInForce says whether telemetry is exported, and which
// source turned it on or off.
func printTelemetryInForce(w io.Writer, s telemetry.Settings) {
	if !s.Enabled() {
		fmt.Fprintf(w, "\nTelemetry in force: off (%s).\n", termtext.Escape(s.Off))
		return
	}
	fmt.Fprintf(w, "\nTelemetry in force: on, turned on by %s, over %s; %s.\n", termtext.Escape(s.SourceText()), s.Protocols(), argumentsLine(s))
}

// headerNames are the names of headers, sorted.
func headerNames(h map[string]string) []string {
	return slices.Sorted(maps.Keys(h))
}

// printMatches lists entries of allowedMcpServers or deniedMcpServers.
func printMatches(w io.Writer, ms []config.ServerMatch) {
	for _, e := range ms {
		fmt.Fprintf(w, "  %-50s %s[%d] at %s\n", termtext.Escape(matchText(e)), e.List, e.Index, at(e.Path, e.Line, e.Col))
	}
}

// matchText is an entry as its key and value.
func matchText(e config.ServerMatch) string {
	switch {
	case e.Name != "":
		return fmt.Sprintf("serverName %q", e.Name)
	case e.Command != nil:
		return "serverCommand " + quoteArgv(e.Command)
	case e.URL != "":
		return fmt.Sprintf("serverUrl %q", e.URL)
	}
	if e.RegistryVersion != "" {
		return fmt.Sprintf("registryName %q registryVersion %q", e.Registry, e.RegistryVersion)
	}
	return fmt.Sprintf("registryName %q", e.Registry)
}

// at is a position for a terminal: path:line:col, or the path alone.
func at(path string, line, col int) string {
	if line > 0 {
		return termtext.Escape(fmt.Sprintf("%s:%d:%d", path, line, col))
	}
	return termtext.Escape(path)
}

// printBlocked writes which of servers the policy blocks.
func printBlocked(w io.Writer, m *config.Managed, servers []config.Server) {
	n := 0
	for _, s := range servers {
		why := m.Check(s, os.LookupEnv)
		if why == nil {
			continue
		}
		if n == 0 {
			fmt.Fprintln(w, "\nYour servers it blocks:")
		}
		n++
		fmt.Fprintf(w, "  ✗ %s (%s): %s\n", termtext.Escape(s.Name), s.Scope, termtext.EscapeLines(why.String()))
	}
	if n == 0 && len(m.Files) > 0 {
		fmt.Fprintf(w, "\nNone of your %d servers is blocked.\n", len(servers))
	}
}

// policyJSON is `freecode policy --json`: the policy as the text shows
// it, the organization's servers redacted as everywhere else.
type policyJSON struct {
	Dir              string                  `json:"dir"`
	Files            []config.ManagedFile    `json:"files"`
	Exclusive        bool                    `json:"exclusive,omitempty"`
	Allowed          []matchJSON             `json:"allowedMcpServers"` // null: no allow list
	Denied           []matchJSON             `json:"deniedMcpServers"`
	Servers          []serverJSON            `json:"mcpServers"`
	Permissions      []config.ManagedRule    `json:"permissions"`
	ManagedRulesOnly bool                    `json:"allowManagedPermissionRulesOnly,omitempty"`
	Sandbox          config.ManagedSandbox   `json:"sandbox"`
	Audit            config.ManagedAudit     `json:"audit"`
	Registry         *config.ManagedRegistry `json:"registry,omitempty"`
	Telemetry        *telemetryJSON          `json:"telemetry,omitempty"`
	TelemetryInForce telemetryInForceJSON    `json:"telemetryInForce"`
	Message          string                  `json:"message,omitempty"`
	Problems         []string                `json:"problems"`
	Blocked          []blockedJSON           `json:"blocked"`
}

// telemetryJSON is the telemetry block: its headers by name alone.
type telemetryJSON struct {
	Enabled   *bool             `json:"enabled,omitempty"`
	Endpoint  string            `json:"endpoint,omitempty"`
	Protocol  string            `json:"protocol,omitempty"`
	Headers   []string          `json:"headers,omitempty"`
	Arguments *bool             `json:"arguments,omitempty"`
	From      map[string]string `json:"from"`
}

// telemetryInForceJSON is whether telemetry is exported as things stand,
// and which source decided: the managed settings, the user's config file
// or the environment.
type telemetryInForceJSON struct {
	On            bool   `json:"on"`
	Source        string `json:"source,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	Off           string `json:"off,omitempty"`
	Arguments     bool   `json:"arguments"`
	ArgumentsFrom string `json:"argumentsFrom,omitempty"`
}

type matchJSON struct {
	Match string `json:"match"` // as matchText writes it
	Entry string `json:"entry"` // deniedMcpServers[2]
	At    string `json:"at"`
}

type serverJSON struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
}

type blockedJSON struct {
	Server string `json:"server"`
	Scope  string `json:"scope"`
	Reason string `json:"reason"`
}

func printPolicyJSON(w io.Writer, m *config.Managed, servers []config.Server, tel telemetry.Settings) error {
	out := policyJSON{
		Dir: config.ManagedDir(), Files: m.Files, Exclusive: m.Exclusive, Permissions: m.Permissions,
		ManagedRulesOnly: m.ManagedRulesOnly, Sandbox: m.Sandbox, Audit: m.Audit, Message: m.Message,
		Denied: matchesJSON(m.Denied), Servers: []serverJSON{}, Problems: []string{}, Blocked: []blockedJSON{},
	}
	if m.Allowed != nil {
		out.Allowed = matchesJSON(m.Allowed)
	}
	if m.Registry.URL != "" {
		out.Registry = &m.Registry
	}
	out.TelemetryInForce = telemetryInForceJSON{On: tel.Enabled(), Source: tel.Source, Off: tel.Off, Arguments: tel.Arguments, ArgumentsFrom: tel.ArgumentsFrom}
	if tel.Enabled() {
		out.TelemetryInForce.Protocol = tel.Protocols()
	}
	if t := m.Telemetry; t.From != nil {
		out.Telemetry = &telemetryJSON{Enabled: t.Enabled, Endpoint: t.Endpoint, Protocol: t.Protocol, Arguments: t.Arguments, From: t.From}
		if t.Headers != nil {
			out.Telemetry.Headers = headerNames(t.Headers)
		}
	}
	for _, s := range m.Servers {
		r := s.Redacted()
		out.Servers = append(out.Servers, serverJSON{Name: r.Name, Type: r.Type, Command: r.Command, URL: r.URL})
	}
	for _, p := range m.Problems {
		out.Problems = append(out.Problems, fmt.Sprintf("%s:%d:%d: %s: %s", p.Path, p.Line, p.Col, p.Key, p.Msg))
	}
	for _, s := range servers {
		if why := m.Check(s, os.LookupEnv); why != nil {
			out.Blocked = append(out.Blocked, blockedJSON{Server: s.Name, Scope: s.Scope, Reason: why.String()})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func matchesJSON(ms []config.ServerMatch) []matchJSON {
	out := []matchJSON{}
	for _, e := range ms {
		out = append(out, matchJSON{Match: matchText(e), Entry: fmt.Sprintf("%s[%d]", e.List, e.Index), At: fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Col)})
	}
	return out
}
