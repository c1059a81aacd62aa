package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/mcp"
	"github.com/spf13/cobra"
)

// importKinds are the clients `mcp import` reads, with a human name.
var importKinds = []struct{ kind, title string }{
	{"claude-desktop", "Claude Desktop"},
	{"claude-code", "Claude Code"},
	{"vscode", "VS Code"},
	{"cursor", "Cursor"},
}

// importDefaultPath returns where kind keeps its MCP servers for the current
// user. os.UserConfigDir is ~/.config (or $XDG_CONFIG_HOME) on Linux,
// ~/Library/Application Support on macOS and %AppData% on Windows, which is
// where Claude Desktop and VS Code put their user files on each OS.
func importDefaultPath(kind string) (string, error) {
	switch kind {
	case "claude-desktop", "vscode":
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		if kind == "vscode" {
			return filepath.Join(dir, "Code", "User", "mcp.json"), nil
		}
		return filepath.Join(dir, "Claude", "claude_desktop_config.json"), nil
	case "claude-code", "cursor":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		if kind == "cursor" {
			return filepath.Join(home, ".cursor", "mcp.json"), nil
		}
		return filepath.Join(home, ".claude.json"), nil
	}
	return "", unknownKind(kind)
}

func unknownKind(kind string) error {
	kinds := make([]string, len(importKinds))
	for i, k := range importKinds {
		kinds[i] = k.kind
	}
	return fmt.Errorf("unknown client %q: want one of %s", kind, strings.Join(kinds, ", "))
}

func newMCPImportCmd(a *app) *cobra.Command {
	var dryRun, moveSecrets bool
	cmd := &cobra.Command{
		Use:   "import <claude-desktop|claude-code|vscode|cursor> [path]",
		Short: "Copy MCP servers from another client's config",
		Long: `Copy the MCP servers of Claude Desktop, Claude Code, VS Code or Cursor into
FreeCode's config. Only the file given, or that client's usual user file, is read:

  claude-desktop  <config dir>/Claude/claude_desktop_config.json
  claude-code     ~/.claude.json
  vscode          <config dir>/Code/User/mcp.json
  cursor          ~/.cursor/mcp.json

(<config dir> is ~/.config on Linux, ~/Library/Application Support on macOS,
%AppData% on Windows.) Servers whose name is already configured are skipped.

Given FreeCode's own config file, saved in that client's shape (its "servers"
or "mcpServers" at the top, or "mcp": {"servers": {…}} an object), import
turns the file into FreeCode's: the servers go into mcp.servers and the
client's map goes, the rest of the file as it was.

Values of "env" and "headers" that look like credentials written out (an
API_KEY, a token, "Authorization": "Bearer …") can be kept in the OS keychain
(else ~/.freecode/auth) instead, with ${secret:NAME} in the config:
--move-secrets moves them, and on a terminal import asks.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := args[0]
			src := ""
			if len(args) == 2 {
				src = args[1]
			} else {
				p, err := importDefaultPath(kind)
				if err != nil {
					return err
				}
				src = p
			}
			title := ""
			for _, k := range importKinds {
				if k.kind == kind {
					title = k.title
				}
			}
			if title == "" {
				return unknownKind(kind)
			}
			data, err := os.ReadFile(src)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no %s config at %s (pass its path: freecode mcp import %s <path>)", title, src, kind)
			}
			if err != nil {
				return err
			}
			out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if path, err := a.path(); err == nil && sameFile(src, path) {
				return importInPlace(cmd, path, kind, title, dryRun)
			}
			servers, secrets, warnings, err := config.ImportWithSecrets(kind, data)
			if err != nil {
				return fmt.Errorf("reading %s: %w", src, err)
			}
			cfg, path, err := a.load()
			if err != nil {
				return unchanged(err)
			}

			for _, w := range warnings {
				fmt.Fprintf(stderr, "warning: %s\n", termtext.EscapeLines(w))
			}
			if len(servers) == 0 {
				fmt.Fprintf(out, "No MCP servers found in %s.\n", src)
				return nil
			}
			// Literal credentials go to the store before any entry is
			// written, so the entries hold their references.
			var fresh []config.Server
			for _, s := range servers {
				if _, exists := cfg.Server(s.Name); !exists && config.CheckName(s.Name) == nil && mcp.SystemPolicy(s, os.LookupEnv) == nil {
					fresh = append(fresh, s)
				}
			}
			var move *bool
			if cmd.Flags().Changed("move-secrets") {
				move = &moveSecrets
			}
			if err := offerMoveSecrets(cmd.Context(), newSecretInput(cmd), out, fresh, move, dryRun); err != nil {
				return err
			}
			verb := "Adding"
			if dryRun {
				verb = "Would add"
			}
			fmt.Fprintf(out, "%s servers from %s (%s) to %s:\n", verb, src, title, path)
			var added []config.Server
			failed := 0
			for _, s := range servers {
				if _, exists := cfg.Server(s.Name); exists {
					fmt.Fprintf(out, "  = %s: already configured, skipped\n", termtext.Escape(s.Name))
					continue
				}
				if err := config.CheckName(s.Name); err != nil {
					fmt.Fprintf(out, "  ! %s: skipped: %s\n", termtext.Escape(s.Name), termtext.EscapeLines(err.Error()))
					failed++
					continue
				}
				if why := mcp.SystemPolicy(s, os.LookupEnv); why != nil {
					fmt.Fprintf(out, "  ! %s: skipped: %s\n", termtext.Escape(s.Name), termtext.EscapeLines(why.String()))
					failed++
					continue
				}
				if !dryRun {
					if err := config.AddServer(path, s); err != nil {
						fmt.Fprintf(out, "  ! %s: %s\n", termtext.Escape(s.Name), termtext.EscapeLines(err.Error()))
						failed++
						continue
					}
				}
				added = append(added, s)
				fmt.Fprintf(out, "  + %s (%s)\n", termtext.Escape(s.Name), s.Type)
				describe(indent{out}, s)
			}
			n := len(added)
			switch {
			case dryRun:
				fmt.Fprintf(out, "Dry run: %d %s would be added; nothing was written.\n", n, plural(n, "server", "servers"))
			default:
				fmt.Fprintf(out, "✓ Added %d %s.\n", n, plural(n, "server", "servers"))
			}
			if err := offerSecrets(cmd, added, secrets, dryRun); err != nil {
				return err
			}
			if failed > 0 {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be added without writing the config")
	cmd.Flags().BoolVar(&moveSecrets, "move-secrets", false, "keep env and header values that look like credentials in the OS keychain, with ${secret:NAME} in the config (asked on a terminal)")
	return cmd
}

// indent shifts describe's lines under a "  + name" line.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	if _, err := i.w.Write([]byte("  ")); err != nil {
		return 0, err
	}
	return i.w.Write(p)
}

// importInPlace imports FreeCode's config file at path, saved in kind's
// shape, into itself (config.ImportFile): the other client's map becomes
// mcp.servers. The file then loads, or what else it holds is said.
func importInPlace(cmd *cobra.Command, path, kind, title string, dryRun bool) error {
	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	res, err := config.ImportFile(path, kind, dryRun)
	if err != nil {
		return unchanged(err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", termtext.EscapeLines(w))
	}
	verb := "Converting"
	if dryRun {
		verb = "Would convert"
	}
	fmt.Fprintf(out, "%s %s from %s's shape to FreeCode's:\n", verb, path, title)
	for _, s := range res.Skipped {
		fmt.Fprintf(out, "  = %s: already configured, skipped\n", termtext.Escape(s.Name))
	}
	for _, s := range res.Added {
		fmt.Fprintf(out, "  + %s (%s)\n", termtext.Escape(s.Name), s.Type)
		describe(indent{out}, s)
	}
	n := len(res.Added)
	if dryRun {
		fmt.Fprintf(out, "Dry run: %d %s would be added; nothing was written.\n", n, plural(n, "server", "servers"))
		return offerSecrets(cmd, res.Added, res.Secrets, true)
	}
	fmt.Fprintf(out, "✓ Added %d %s.\n", n, plural(n, "server", "servers"))
	if _, err := config.Load(path); err != nil {
		return fmt.Errorf("the file still does not load:\n%w", err)
	}
	return offerSecrets(cmd, res.Added, res.Secrets, false)
}

// offerSecrets says which secrets the servers an import added (or, with
// dryRun, would add) reference that are not set: the password prompts of
// VS Code's file (described by secrets) and any ${secret:NAME} they held.
// On a terminal it asks for each now, typed unseen; Enter alone skips
// one. Elsewhere it says what to run.
func offerSecrets(cmd *cobra.Command, added []config.Server, secrets []config.ImportedSecret, dryRun bool) error {
	users := map[string][]string{}
	var names []string
	for _, s := range added {
		for _, name := range config.SecretRefs(s) {
			if users[name] == nil {
				names = append(names, name)
			}
			users[name] = append(users[name], termtext.Escape(s.Name))
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	out := cmd.OutOrStdout()
	store, err := openSecrets()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var unset []string
	for _, name := range names {
		if err := secretstore.ValidName(name); err != nil {
			fmt.Fprintf(out, "  ! ${secret:%s} in %s: %s\n", termtext.Escape(name), strings.Join(users[name], ", "), termtext.Escape(err.Error()))
			continue
		}
		if _, err := store.Where(ctx, name); errors.Is(err, secretstore.ErrNotFound) {
			unset = append(unset, name)
		} else if err != nil {
			return err
		}
	}
	if len(unset) == 0 {
		return nil
	}
	about := func(name string) string {
		d := ""
		if i := slices.IndexFunc(secrets, func(x config.ImportedSecret) bool { return x.Name == name }); i >= 0 && secrets[i].Description != "" {
			d = termtext.Escape(secrets[i].Description) + ", "
		}
		return d + "for " + strings.Join(users[name], ", ")
	}
	verb := "read"
	if dryRun {
		verb = "would read"
	}
	fmt.Fprintf(out, "The servers %s %d %s not set yet (kept out of the config: in the OS keychain, else ~/.freecode/auth):\n", verb, len(unset), plural(len(unset), "secret", "secrets"))
	for _, name := range unset {
		fmt.Fprintf(out, "  %s (%s): freecode secret set %s\n", name, about(name), name)
	}
	in := newSecretInput(cmd)
	if dryRun || !in.tty {
		if !dryRun {
			fmt.Fprintln(out, "Until each is set, the servers that read it do not start.")
		}
		return nil
	}
	fmt.Fprintln(out, "Enter each now (not shown; Enter alone skips it):")
	for _, name := range unset {
		v, err := in.read(ctx, fmt.Sprintf("Value for %s (%s, not shown): ", name, about(name)))
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(out, "  (no more input: set the rest with `freecode secret set NAME`)")
			return nil
		}
		if err != nil {
			return err
		}
		if v == "" {
			fmt.Fprintf(out, "  skipped %s: `freecode secret set %s` sets it later\n", name, name)
			continue
		}
		where, err := store.Set(ctx, name, v)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "✓ Saved secret %s in %s\n", name, termtext.Escape(where))
	}
	return nil
}
