// Command freecode-serve is FreeCode's sidecar: what an editor runs to use
// the user's MCP servers through FreeCode. It speaks the frontend protocol
// (JSON-RPC with LSP framing; see docs/protocol.md) on stdio, or, with
// --listen, on a local socket for several frontends at once.
//
// Usage:
//
//	freecode-serve [--listen unix:PATH | --listen tcp:127.0.0.1:PORT | --listen ws://127.0.0.1:PORT]
//	               [--project DIR] [--config PATH] [--trace] [--log-level LEVEL]
//
// Logs go to stderr; stdout is the protocol.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	fcconfig "github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/hoptrace"
	"github.com/freecode/freecode/internal/plainlog"
	"github.com/freecode/freecode/mcp/proc"
	"github.com/freecode/freecode/mcp/sandbox"
	"github.com/freecode/freecode/server"
	"github.com/freecode/freecode/telemetry"
)

func main() {
	// A sandboxed server's bridge to its proxy is this binary (mcp/sandbox).
	sandbox.RunBridge()
	var (
		listen   = flag.String("listen", "", "listen on unix:PATH, tcp:127.0.0.1:PORT or ws://127.0.0.1:PORT (browsers; the page is freecode serve's) instead of stdio")
		project  = flag.String("project", "", "project directory (listening: default the current directory; stdio: when the editor names none)")
		config   = flag.String("config", "", "config file (default $FREECODE_CONFIG or ~/.freecode/config.json)")
		trace    = flag.Bool("trace", false, "log every JSON-RPC message to stderr")
		logLevel = flag.String("log-level", "info", "log level: debug, info, warn or error")
		logFmt   = flag.String("log-format", plainlog.FormatAuto, "log lines: plain (LEVEL message key=value, for an editor's output channel), text (with time=), or auto (text on a terminal)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "freecode-serve: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "freecode-serve: --log-level: %v\n", err)
		os.Exit(2)
	}
	handler, err := plainlog.NewHandler(os.Stderr, *logFmt, &slog.HandlerOptions{Level: level})
	if err != nil {
		fmt.Fprintf(os.Stderr, "freecode-serve: --log-format: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(handler)
	// Servers that a FreeCode process killed outright left behind are
	// reaped before this one starts any; the ones it starts are recorded
	// beside the config file, for the next one to reap if it is killed.
	path := *config
	if path == "" {
		path, _ = fcconfig.DefaultPath()
	}
	if path != "" {
		if err := proc.ReapOrphans(filepath.Join(filepath.Dir(path), "run"), logger); err != nil {
			logger.Warn("reaping servers left behind", "error", err)
		}
	}
	opts := &server.RunOptions{Listen: *listen}
	// The sign-in files `freecode web` writes, removed once used.
	opts.Web.SignInDir, _ = server.DefaultSignInDir()
	opts.Server.Version = version()
	opts.Server.Logger = logger
	opts.Server.Workspace.Root, opts.Server.Workspace.ConfigPath = *project, *config
	if *trace {
		opts.Server.Trace = os.Stderr
	}
	// An editor may close our stdout as soon as it has sent exit, while
	// the last answers are still being written: a broken pipe must be a
	// write error the connection ends on, not a signal that kills the
	// sidecar before it has stopped its servers.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// OpenTelemetry, if the managed settings, the user's config file
	// (mcp.telemetry) or this process's own environment turn it on (never
	// a project's file): flushed before exit.
	tel, stopTelemetry := telemetry.StartProcess(ctx, os.Getenv, &telemetry.Options{Logger: logger, Version: version(),
		ConfigPath: opts.Server.Workspace.ConfigPath})
	opts.Server.Workspace.TracerProvider, opts.Server.Workspace.MeterProvider = tel.Recording()
	opts.Server.Workspace.OnCallEvent, opts.Server.Workspace.TelemetryArguments = tel.CallEvents, tel.Arguments
	err = server.Run(ctx, opts)
	stopTelemetry()
	hoptrace.Report() // with the build tag hoptrace: the stages of the hop
	switch {
	case errors.Is(err, server.ErrNoShutdown):
		logger.Warn(err.Error())
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, "freecode-serve:", err)
		os.Exit(1)
	}
}

// version is the module's version, "(devel)" in a build from a checkout.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return "(devel)"
}
