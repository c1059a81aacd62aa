package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/internal/plainlog"
	"github.com/freecode/freecode/server"
)

func init() { subcommands = append(subcommands, newServeCmd) }

// newServeCmd is `freecode serve`: the sidecar, as freecode-serve runs it.
func newServeCmd(a *app) *cobra.Command {
	var (
		stdio     bool
		listen    string
		project   string
		trace     bool
		logLevel  string
		logFormat string
		origins   []string
	)
	cmd := &cobra.Command{
		Use:   "serve [--stdio | --listen unix:PATH | --listen tcp:127.0.0.1:PORT | --listen ws://127.0.0.1:PORT]",
		Short: "Run the sidecar: FreeCode's JSON-RPC protocol for editors and other frontends",
		Long: `Run FreeCode's sidecar, the program an editor talks to: it connects the MCP
servers of the config file (and the project's approved ones), keeps them in
line with the files as they are edited, and runs tool calls through the
orchestrator, asking the frontend that made a call for permission.

With --stdio (the default) the protocol is on stdin and stdout, for the editor
that started it. With --listen it serves several frontends at once on a local
socket (loopback only) and records its address and a token in
~/.freecode/serve.json (mode 0600), which every frontend presents; the file
is removed when it stops. It stops on shutdown from a frontend, or a signal.

With --listen ws://127.0.0.1:PORT (PORT 0 picks one) it serves browsers: the
FreeCode MCP page at http://127.0.0.1:PORT/ and the protocol over a WebSocket
at /rpc. A browser signs in with the one-time link ` + "`freecode web`" + ` opens; only
the sidecar's own page (and origins listed with --allow-origin) may connect.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stdio && listen != "" {
				return errors.New("--stdio and --listen exclude each other")
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			opts := &server.RunOptions{Listen: listen}
			for _, o := range origins {
				norm, err := server.NormalizeOrigin(o)
				if err != nil {
					return fmt.Errorf("--allow-origin: %w", err)
				}
				opts.Web.Origins = append(opts.Web.Origins, norm)
			}
			if len(origins) > 0 && !strings.HasPrefix(listen, "ws://") {
				return errors.New("--allow-origin needs --listen ws://127.0.0.1:PORT")
			}
			opts.Web.Files = webFiles
			// The sign-in files `freecode web` writes, removed here once used
			// (without a home directory, there are none).
			opts.Web.SignInDir, _ = server.DefaultSignInDir()
			handler, err := plainlog.NewHandler(cmd.ErrOrStderr(), logFormat, &slog.HandlerOptions{Level: level})
			if err != nil {
				return fmt.Errorf("--log-format: %w", err)
			}
			opts.Server.Logger = slog.New(handler)
			opts.Server.Workspace.Root, opts.Server.Workspace.ConfigPath = project, a.configPath
			if bi, ok := debug.ReadBuildInfo(); ok {
				opts.Server.Version = bi.Main.Version
			}
			if trace {
				opts.Server.Trace = cmd.ErrOrStderr()
			}
			// SIGHUP too: the terminal that started a listening sidecar
			// went away.
			// A frontend closing our stdout right after exit is a write
			// error, not a SIGPIPE that kills us before the servers stop.
			signal.Ignore(syscall.SIGPIPE)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			err = server.Run(ctx, opts)
			if errors.Is(err, server.ErrNoShutdown) {
				opts.Server.Logger.Warn(err.Error())
				return exitError(1)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve on stdin and stdout (the default)")
	cmd.Flags().StringVar(&listen, "listen", "", "serve on unix:PATH, tcp:127.0.0.1:PORT or ws://127.0.0.1:PORT (browsers)")
	cmd.Flags().StringArrayVar(&origins, "allow-origin", nil, "with --listen ws://: another origin whose pages may connect, as scheme://host:port (repeatable)")
	cmd.Flags().StringVar(&project, "project", "", "project directory (listening: default the current directory; stdio: when the editor names none)")
	cmd.Flags().BoolVar(&trace, "trace", false, "log every JSON-RPC message to stderr")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&logFormat, "log-format", plainlog.FormatAuto, "log lines: plain (LEVEL message key=value, for an editor's output channel), text (with time=), or auto (text on a terminal)")
	return cmd
}
