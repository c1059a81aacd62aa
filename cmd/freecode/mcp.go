package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/sandbox"
	"github.com/spf13/cobra"
)

func init() { subcommands = append(subcommands, newMCPCmd) }

// newMCPCmd is `freecode mcp`: edit the mcp.servers section of the config
// file and try servers out. Only add/remove/enable/disable/import write the
// file, and only through config's lossless edits.
func newMCPCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage and test MCP servers",
		Long: `Manage the MCP servers in FreeCode's config file and try them out.

The config file is --config, else $FREECODE_CONFIG, else ~/.freecode/config.json.
Only the "mcp" section is ever edited; other keys and comments are kept as they are.

status, start, stop, restart and logs talk to the running sidecar (freecode serve
--listen) that serves the same config file, when there is one.`,
	}
	cmd.AddCommand(
		newMCPAddCmd(a),
		newMCPRemoveCmd(a),
		newMCPListCmd(a),
		newMCPEnableCmd(a, true),
		newMCPEnableCmd(a, false),
		newMCPStartCmd(a),
		newMCPToolsCmd(a),
		newMCPImportCmd(a),
		newMCPApproveCmd(a),
		newMCPServeCmd(a),
		newMCPLoginCmd(a),
		newMCPLogoutCmd(a),
		newMCPResourcesCmd(a), // mcp_resources.go
		newMCPPromptsCmd(a),
		newMCPReviewCmd(a),
		newMCPSearchCmd(a),   // mcp_registry.go
		newMCPInstallCmd(a),  // mcp_registry.go
		newMCPOutdatedCmd(a), // mcp_registry_update.go
		newMCPUpdateCmd(a),   // mcp_registry_update.go
	)
	cmd.AddCommand(newMCPLiveCmds(a)...) // mcp_live.go: status, stop, restart, logs
	return cmd
}

// path returns the config file the command works on.
// Wherever it is, no server the command sandboxes reads it.
func (a *app) path() (string, error) {
	path := a.configPath
	if path == "" {
		var err error
		if path, err = config.DefaultPath(); err != nil {
			return "", err
		}
	}
	sandbox.GuardConfig(path)
	return path, nil
}

// load reads the config file, with the file's path for messages. The
// file's warnings (keys FreeCode ignores: a misspelt "timout", Claude's
// "disabled") go to stderr the first time: a command that reads the file
// and says nothing of them shows a server enabled that the user meant
// disabled.
func (a *app) load() (*config.Config, string, error) {
	path, err := a.path()
	if err != nil {
		return nil, "", err
	}
	cfg, err := config.Load(path)
	warnings := []config.Problem(nil)
	if ve := (*config.ValidationError)(nil); errors.As(err, &ve) {
		warnings = ve.Warnings
	} else if cfg != nil {
		warnings = cfg.Warnings
	}
	a.warnConfig(path, warnings)
	if err != nil {
		return nil, path, err
	}
	return cfg, path, nil
}

// warnConfig prints the config file's warnings on stderr, once a command,
// as the workspace-based commands print them (toolsRun.reportProblems):
// "warning: path:line:col: key: server "x": message".
func (a *app) warnConfig(path string, warnings []config.Problem) {
	if a.warned || a.stderr == nil {
		return
	}
	a.warned = true
	for _, p := range warnings {
		at := path
		if p.Line > 0 {
			at = fmt.Sprintf("%s:%d:%d", path, p.Line, p.Col)
		}
		msg := p.Msg
		if p.Server != "" {
			msg = fmt.Sprintf("server %q: %s", p.Server, msg)
		}
		fmt.Fprintf(a.stderr, "warning: %s: %s: %s\n", termtext.Escape(at), termtext.Escape(p.Key), termtext.Escape(msg))
	}
}

// lookup returns the configured server name, or an error that lists the
// servers there are, so a typo is easy to spot.
func lookup(cfg *config.Config, path, name string) (config.Server, error) {
	if s, ok := cfg.Server(name); ok {
		return s, nil
	}
	return config.Server{}, unknownServer(cfg, path, name)
}

func unknownServer(cfg *config.Config, path, name string) error {
	if len(cfg.MCP.Servers) == 0 {
		return fmt.Errorf("no server named %q: %s has no MCP servers (add one with `freecode mcp add`)", name, path)
	}
	names := make([]string, len(cfg.MCP.Servers))
	for i, s := range cfg.MCP.Servers {
		names[i] = s.Name
	}
	return fmt.Errorf("no server named %q in %s; configured: %s", name, path, strings.Join(names, ", "))
}

// unchanged marks an error after which the config file was not written, so
// the user knows a failed edit left nothing half-done.
func unchanged(err error) error {
	var pe *config.ParseError
	var ve *config.ValidationError
	if errors.As(err, &pe) || errors.As(err, &ve) {
		return fmt.Errorf("%w\n(the config file was not changed)", err)
	}
	return err
}

type mcpAddFlags struct {
	env       []string
	headers   []string
	timeout   string
	disabled  bool
	transport string
	cwd       string
	oauth     config.OAuth // --client-id, --client-secret, --client-metadata-url, --scope, --callback-port
}

func newMCPAddCmd(a *app) *cobra.Command {
	var f mcpAddFlags
	cmd := &cobra.Command{
		Use:   "add <name> <local|remote> <command-or-url>\n  freecode mcp add <name> local [flags] -- <command> [args...]",
		Short: "Add an MCP server to the config file",
		Long: `Add an MCP server to the config file. Nothing is started: try it with ` + "`freecode mcp start <name>`" + `.

A local server's command is one quoted string, split like a shell would
("npx -y @modelcontextprotocol/server-memory"), or its argv after --.
Values of --env and --header may hold ${env:NAME}, expanded when connecting.`,
		Example: `  freecode mcp add memory local "npx -y @modelcontextprotocol/server-memory" --env MEMORY_FILE_PATH=/tmp/mem.json
  freecode mcp add fs local -- npx -y @modelcontextprotocol/server-filesystem "$HOME/src"
  freecode mcp add gh remote https://api.githubcopilot.com/mcp/ --header 'Authorization=Bearer ${env:GITHUB_TOKEN}'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := f.server(args, cmd.ArgsLenAtDash())
			if err != nil {
				return err
			}
			cfg, path, err := a.load()
			if err != nil {
				return unchanged(err)
			}
			if _, exists := cfg.Server(srv.Name); exists {
				return fmt.Errorf("a server named %q is already in %s (remove it first, or pick another name)", srv.Name, path)
			}
			if why := mcp.SystemPolicy(srv, os.LookupEnv); why != nil {
				return fmt.Errorf("server %q is %s\n(the config file was not changed)", srv.Name, why)
			}
			if err := config.AddServer(path, srv); err != nil {
				return unchanged(err) // config's errors name the server already
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "✓ Added %s server %q to %s\n", srv.Type, srv.Name, path)
			describe(out, srv)
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		// `mcp add x local npx -y pkg`: the server's own flags look like ours.
		return fmt.Errorf("%w (to pass flags to the server's command, quote the command or put it after --)", err)
	})
	fl := cmd.Flags()
	fl.StringArrayVar(&f.env, "env", nil, "environment variable `K=V` for a local server (repeatable)")
	fl.StringArrayVar(&f.headers, "header", nil, "HTTP header `K=V` for a remote server (repeatable)")
	fl.StringVar(&f.timeout, "timeout", "", "connect timeout: milliseconds or a Go duration like 10s (default 5s)")
	fl.BoolVar(&f.disabled, "disabled", false, "add the server disabled")
	fl.StringVar(&f.transport, "transport", "", "remote transport: http, sse or auto (default auto)")
	fl.StringVar(&f.cwd, "cwd", "", "working directory of a local server")
	fl.StringVar(&f.oauth.ClientID, "client-id", "", "OAuth client id registered with the server's authorization server")
	fl.StringVar(&f.oauth.ClientSecret, "client-secret", "", "that client's secret; write ${env:NAME} to keep it out of the file")
	fl.StringVar(&f.oauth.ClientMetadataURL, "client-metadata-url", "", "https URL of a Client ID Metadata Document to use as the OAuth client id")
	fl.StringArrayVar(&f.oauth.Scopes, "scope", nil, "OAuth scope to ask for instead of the server's (repeatable)")
	fl.IntVar(&f.oauth.CallbackPort, "callback-port", 0, "fixed loopback port for the OAuth redirect (default any free port)")
	return cmd
}

// server builds the entry `mcp add` writes from its arguments. dash is the
// number of arguments before "--", or -1.
func (f *mcpAddFlags) server(args []string, dash int) (config.Server, error) {
	var srv config.Server
	switch {
	case dash >= 0 && dash != 2:
		return srv, fmt.Errorf("usage: freecode mcp add <name> local -- <command> [args...]")
	case dash < 0 && len(args) != 3:
		return srv, fmt.Errorf("usage: freecode mcp add <name> <local|remote> <command-or-url> (got %d arguments; quote the command, or put it after --)", len(args))
	}
	srv = config.Server{Name: args[0], Type: args[1], Enabled: !f.disabled, Cwd: f.cwd}
	if err := config.CheckName(srv.Name); err != nil {
		return srv, err
	}
	switch srv.Type {
	case config.TypeLocal:
		if dash >= 0 {
			srv.Command = slices.Clone(args[2:])
		} else {
			argv, err := config.SplitCommand(args[2])
			if err != nil {
				return srv, err
			}
			srv.Command = argv
		}
		if len(srv.Command) == 0 || srv.Command[0] == "" {
			return srv, errors.New("a local server needs a command")
		}
		if len(f.headers) > 0 || f.transport != "" {
			return srv, errors.New("--header and --transport are for remote servers")
		}
		if !f.oauth.Equal(&config.OAuth{}) {
			return srv, errors.New("--client-id, --client-secret, --client-metadata-url, --scope and --callback-port are for remote servers")
		}
	case config.TypeRemote:
		if dash >= 0 {
			return srv, errors.New("a remote server takes a URL, not a command after --")
		}
		srv.URL = args[2]
		srv.Transport = f.transport
		switch f.transport {
		case "", config.TransportAuto, config.TransportHTTP, config.TransportSSE:
		default:
			return srv, fmt.Errorf("--transport %q: want http, sse or auto", f.transport)
		}
		if len(f.env) > 0 || f.cwd != "" {
			return srv, errors.New("--env and --cwd are for local servers")
		}
		if !f.oauth.Equal(&config.OAuth{}) {
			srv.OAuth = &f.oauth
		}
	default:
		return srv, fmt.Errorf("server type %q: want local or remote", srv.Type)
	}
	var err error
	if srv.Env, err = keyValues("--env", f.env); err != nil {
		return srv, err
	}
	if srv.Headers, err = keyValues("--header", f.headers); err != nil {
		return srv, err
	}
	if f.timeout != "" {
		if srv.Timeout, err = parseTimeout(f.timeout); err != nil {
			return srv, err
		}
	}
	return srv.WithDefaults(), nil
}

func keyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flag, redactKV(kv))
		}
		m[k] = v
	}
	return m, nil
}

// redactKV hides the value of a malformed K=V so an error never echoes a
// secret pasted in the wrong form.
func redactKV(kv string) string {
	if k, _, ok := strings.Cut(kv, ":"); ok {
		return k + ":***"
	}
	if len(kv) > 4 {
		return kv[:4] + "…"
	}
	return kv
}

// parseTimeout reads a timeout as milliseconds ("5000") or a Go duration ("5s").
func parseTimeout(s string) (time.Duration, error) {
	var d time.Duration
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		d = time.Duration(ms) * time.Millisecond
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("--timeout %q: want milliseconds (5000) or a duration (5s)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("--timeout %q: must be positive", s)
	}
	return d, nil
}

// describe prints a server entry's details, secrets hidden.
func describe(w io.Writer, srv config.Server) {
	r := srv.Redacted()
	if r.Type == config.TypeLocal {
		fmt.Fprintf(w, "  command:   %s\n", termtext.Escape(quoteArgv(r.Command)))
		if r.Cwd != "" {
			fmt.Fprintf(w, "  cwd:       %s\n", termtext.Escape(r.Cwd))
		}
	} else {
		fmt.Fprintf(w, "  url:       %s\n", termtext.Escape(r.URL))
		fmt.Fprintf(w, "  transport: %s\n", r.Transport)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		fmt.Fprintf(w, "  env:       %s=%s\n", termtext.Escape(k), r.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		fmt.Fprintf(w, "  header:    %s: %s\n", termtext.Escape(k), r.Headers[k])
	}
	if o := r.OAuth; o != nil {
		describeOAuth(w, o)
	}
	if r.Timeout != config.DefaultTimeout {
		fmt.Fprintf(w, "  timeout:   %s\n", r.Timeout)
	}
	if !r.Enabled {
		fmt.Fprintln(w, "  disabled (enable it with `freecode mcp enable "+r.Name+"`)")
	}
}

// quoteArgv joins argv into one line a shell (and config.SplitCommand)
// would split back into the same words.
func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

func newMCPRemoveCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "remove <name>",
		Aliases: []string{"rm"},
		Short:   "Remove an MCP server from the config file",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := a.load()
			var ve *config.ValidationError
			switch {
			case errors.As(err, &ve):
				// Removing the entry may be the very fix the file needs,
				// so a file that parses but breaks a rule does not block it.
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", err)
			case err != nil:
				return unchanged(err)
			default:
				if _, err := lookup(cfg, path, args[0]); err != nil {
					return err
				}
			}
			if err := config.RemoveServer(path, args[0]); err != nil {
				return unchanged(fmt.Errorf("removing %q: %w", args[0], err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "✓ Removed server %q from %s\n", args[0], path)
			return nil
		},
	}
}

func newMCPEnableCmd(a *app, enable bool) *cobra.Command {
	verb, done := "enable", "Enabled"
	if !enable {
		verb, done = "disable", "Disabled"
	}
	return &cobra.Command{
		Use:   verb + " <name>",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " an MCP server in the config file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := a.load()
			if err != nil {
				return unchanged(err)
			}
			srv, err := lookup(cfg, path, args[0])
			if err != nil {
				return err
			}
			if srv.Enabled == enable {
				fmt.Fprintf(cmd.OutOrStdout(), "Server %q is already %sd\n", srv.Name, verb)
				return nil
			}
			if err := config.SetEnabled(path, srv.Name, enable); err != nil {
				return unchanged(fmt.Errorf("%s %q: %w", verb, srv.Name, err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "✓ %s server %q\n", done, srv.Name)
			return nil
		},
	}
}

func newMCPListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the configured MCP servers",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, path, err := a.load()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(cfg.MCP.Servers) == 0 {
				fmt.Fprintf(out, "No MCP servers in %s. Add one with `freecode mcp add <name> local <command>`.\n", path)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTYPE\tENABLED\tCOMMAND/URL")
			var blocked []string
			for _, s := range cfg.MCP.Servers {
				r := s.Redacted()
				target := r.URL
				if r.Type == config.TypeLocal {
					target = quoteArgv(r.Command)
				} else if r.Transport != config.TransportAuto {
					target += " (" + r.Transport + ")"
				}
				enabled := "yes"
				if !r.Enabled {
					enabled = "no"
				}
				if why := mcp.SystemPolicy(s, os.LookupEnv); why != nil {
					enabled = "blocked"
					blocked = append(blocked, fmt.Sprintf("%s: %s", s.Name, why))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Type, enabled, termtext.Escape(target))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, b := range blocked {
				fmt.Fprintf(out, "✗ %s\n", termtext.EscapeLines(b))
			}
			return nil
		},
	}
}
