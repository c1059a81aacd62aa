// Command freecode is FreeCode's CLI: `freecode mcp …` manages and tests MCP
// servers, `freecode tools …` runs the orchestrator on its own.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// app holds what every subcommand shares: the global flags.
type app struct {
	configPath string // --config; empty means FREECODE_CONFIG or ~/.freecode/config.json
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
	for _, sub := range subcommands {
		root.AddCommand(sub(a))
	}
	return root
}

func main() {
	if err := newRootCmd().Execute(); err != nil {
		var ec exitCoder
		if !asExitCoder(err, &ec) {
			fmt.Fprintln(os.Stderr, "freecode:", err)
			os.Exit(1)
		}
		os.Exit(ec.ExitCode())
	}
}
