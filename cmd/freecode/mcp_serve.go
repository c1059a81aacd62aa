package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/mcpserve"
	"github.com/freecode/freecode/telemetry"
	"github.com/freecode/freecode/workspace"
)

// version is what `freecode mcp serve` tells its clients it is.
const version = "0.1.0"

// shutdownGrace bounds how long an HTTP server waits for its requests to
// end on shutdown; the streams a client keeps open would otherwise hold
// it forever.
const shutdownGrace = 5 * time.Second

// serveFlags are the flags of `freecode mcp serve`.
type serveFlags struct {
	stdio       bool
	http        string
	project     string
	noAuth      bool
	allowRemote bool
	newToken    bool
}

func newMCPServeCmd(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--stdio | --http 127.0.0.1:PORT]",
		Short: "Run FreeCode as an MCP server in front of your MCP servers",
		Long: `Run FreeCode as an MCP server: any MCP client that connects gets the tools of every
enabled server of the config file (and the project's approved ones) as
mcp__<server>__<tool>, plus FreeCode's built-ins, and every call goes through
FreeCode's orchestrator: arguments validated, permission rules applied, the
server's timeout, the result cap.

A call a rule denies is a tool error naming the rule. A call that needs
permission asks the client's user with an elicitation form (allow once / deny)
when the client supports elicitation (for a client of MCP 2026-07-28, in an
input_required result it answers by calling again), and is denied otherwise,
with the rule to add. The tools list follows the servers: clients get
tools/list_changed (on subscriptions/listen for 2026-07-28 clients).

--stdio (the default) serves one client on standard input and output: the
command an MCP client's config starts. --http serves Streamable HTTP at
http://HOST:PORT/mcp, MCP 2024-11-05 to 2026-07-28, and the legacy HTTP+SSE
transport at http://HOST:PORT/sse, on a loopback address (port 0 picks one). Every request
must then send "Authorization: Bearer <token>": the token is printed on standard
error when it is made and kept, with the URL, in ~/.freecode/auth/mcp-serve.json
(mode 0600, whatever --config names); the next start keeps it unless
--new-token, and says where it is instead of printing it. --no-auth serves
without a token, on loopback only. A non-loopback address needs --allow-remote
and a token. Requests whose Host is not the server's address or whose Origin
is not a loopback page are refused (DNS rebinding).`,
		Example: `  freecode mcp serve
  freecode mcp serve --http 127.0.0.1:8765
  freecode mcp serve --project ~/src/app --http 127.0.0.1:0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.stdio && f.http != "" {
				return errors.New("--stdio and --http: choose one")
			}
			if f.http == "" && (f.noAuth || f.allowRemote || f.newToken) {
				return errors.New("--no-auth, --allow-remote and --new-token go with --http")
			}
			if f.noAuth && f.allowRemote {
				return errors.New("--no-auth is for loopback addresses only: a remote bind always requires the token")
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			return a.serveMCP(ctx, cmd.ErrOrStderr(), &f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.stdio, "stdio", false, "serve one client over standard input and output (the default)")
	fl.StringVar(&f.http, "http", "", "serve Streamable HTTP on this loopback address, such as 127.0.0.1:8765")
	fl.StringVar(&f.project, "project", "", "project directory for project servers and rules (default: the current directory)")
	fl.BoolVar(&f.noAuth, "no-auth", false, "with --http on loopback: require no token")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "with --http: allow an address that is not loopback (the token stays required)")
	fl.BoolVar(&f.newToken, "new-token", false, "with --http: make a new token instead of keeping the one in mcp-serve.json")
	return cmd
}

// serveMCP runs the workspace and the MCP server until the client leaves
// (stdio) or a signal comes.
func (a *app) serveMCP(ctx context.Context, stderr io.Writer, f *serveFlags) error {
	path, err := a.path()
	if err != nil {
		return err
	}
	if path, err = filepath.Abs(path); err != nil {
		return err
	}
	project := f.project
	if project == "" {
		if project, err = os.Getwd(); err != nil {
			return err
		}
	}
	// The address is checked, and taken, before any server starts.
	var ln net.Listener
	if f.http != "" {
		if ln, err = mcpserve.Listen(ctx, f.http, &mcpserve.ListenOptions{AllowRemote: f.allowRemote}); err != nil {
			return err
		}
		defer ln.Close()
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tel, stopTelemetry := telemetry.StartProcess(ctx, os.Getenv, &telemetry.Options{Logger: logger, ConfigPath: path})
	defer stopTelemetry() // after the workspace closed
	tp, mp := tel.Recording()
	w, err := workspace.New(ctx, &workspace.Options{ConfigPath: path, Root: project, Logger: logger,
		TracerProvider: tp, MeterProvider: mp, OnCallEvent: tel.CallEvents, TelemetryArguments: tel.Arguments})
	if err != nil {
		return err
	}
	defer w.Close()
	for _, p := range w.Problems() {
		for _, pr := range p.Problems {
			fmt.Fprintf(stderr, "freecode mcp serve: %s:%d:%d: %s\n", p.Path, pr.Line, pr.Column, pr.Message)
		}
	}
	// Clients list the tools once after initialize, and not every client
	// follows tools/list_changed: serve once the servers are connected
	// or failed, within their timeouts.
	var unsettled *workspace.NotSettledError
	if err := w.WaitSettled(ctx); err != nil && !errors.As(err, &unsettled) {
		return err
	}
	// The permission questions of 2026-07-28 clients outlive a restart
	// (their key and the answers taken are kept with the user's secrets).
	stateDir, err := config.SecretsDir()
	if err != nil {
		stateDir = ""
	}
	s := mcpserve.New(w, &mcpserve.Options{Logger: logger, Version: version, StateDir: stateDir})
	defer s.Close()
	if f.http == "" {
		err := s.Run(ctx, &mcpserve.StdioTransport{})
		if ctx.Err() != nil {
			return nil // a signal: the normal way to stop
		}
		return err
	}
	return serveHTTP(ctx, stderr, s, ln, f)
}

// serveHTTP serves s over Streamable HTTP on ln until ctx is done.
func serveHTTP(ctx context.Context, stderr io.Writer, s *mcpserve.Server, ln net.Listener, f *serveFlags) error {
	file, err := mcpserve.ServeFilePath()
	if err != nil {
		return err
	}
	kept, ok := mcpserve.LoadToken(file)
	made := !ok || f.newToken
	if made {
		kept = mcpserve.NewToken()
	}
	token := kept
	if f.noAuth {
		token = ""
	}
	h, err := s.Handler(mcpserve.HTTPOptions{Addr: ln.Addr(), Token: token})
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + mcpserve.Path
	// Without a token the kept one stays in the file, for the next start.
	if err := mcpserve.WriteServeFile(file, mcpserve.ServeFile{URL: url, Token: kept, PID: os.Getpid()}); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "freecode mcp serve: listening on %s\n", url)
	fmt.Fprintf(stderr, "freecode mcp serve: legacy HTTP+SSE clients: http://%s%s\n", ln.Addr(), mcpserve.SSEPath)
	// The token is shown once, when it is made: a terminal's scrollback
	// or a captured log of every later start need not hold it.
	switch {
	case token != "" && made:
		fmt.Fprintf(stderr, "freecode mcp serve: new token %s (kept in %s, mode 0600; send it as \"Authorization: Bearer <token>\")\n", token, file)
	case token != "":
		fmt.Fprintf(stderr, "freecode mcp serve: token kept in %s (mode 0600; send it as \"Authorization: Bearer <token>\")\n", file)
	default:
		fmt.Fprintln(stderr, "freecode mcp serve: no token (--no-auth): any program on this machine can call your tools")
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Sessions first: their open streams would hold Shutdown to its limit.
	s.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}
