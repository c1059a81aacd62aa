// Command freecode is FreeCode's CLI: `freecode mcp …` manages and tests MCP
// servers, `freecode tools …` runs the orchestrator on its own.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/mcp/proc"
	"github.com/freecode/freecode/mcp/sandbox"
)

// app holds what every subcommand shares: the global flags, and where the
// config file's warnings go.
type app struct {
	configPath string // --config; empty means FREECODE_CONFIG or ~/.freecode/config.json
	// stderr is the command's; the config file's warnings go there, once
	// (warned), however many times the command reads the file.
	stderr io.Writer
	warned bool
}

// subcommands are the top-level commands; each file of this package adds its
// own in an init function so that features stay in their own files.
var subcommands []func(*app) *cobra.Command

func newRootCmd() *cobra.Command {
	a := &app{}
	root := &cobra.Command{
		Use:           "freecode",
		Short:         "FreeCode's command line: MCP servers and tools",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&a.configPath, "config", "", "config file (default $FREECODE_CONFIG or ~/.freecode/config.json)")
	// Servers that a FreeCode process killed outright (kill -9) left
	// behind are reaped before anything else starts; the servers this one
	// starts are recorded beside the config file for the next one.
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		a.stderr = cmd.ErrOrStderr()
		path, err := a.path()
		if err != nil {
			return
		}
		logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
		if err := proc.ReapOrphans(filepath.Join(filepath.Dir(path), "run"), logger); err != nil {
			logger.Warn("reaping servers left behind", "error", err)
		}
	}
	for _, sub := range subcommands {
		root.AddCommand(sub(a))
	}
	return root
}

func main() {
	// A sandboxed server's bridge to its proxy is this binary (mcp/sandbox).
	sandbox.RunBridge()
	// SIGHUP (the terminal closed) stops like SIGINT and SIGTERM: the
	// command's context is cancelled and it stops its servers, process
	// groups and all. Left to its default, SIGHUP would kill freecode at
	// once and leave what its servers started running under init.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		var ec exitCoder
		if !asExitCoder(err, &ec) {
			fmt.Fprintln(os.Stderr, "freecode:", err)
			os.Exit(1)
		}
		os.Exit(ec.ExitCode())
	}
}
