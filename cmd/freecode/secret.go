package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/secretstore"
	"github.com/freecode/freecode/internal/termtext"
)

func init() { subcommands = append(subcommands, newSecretCmd) }

// newSecretCmd is `freecode secret`: the values of the ${secret:NAME}
// references of server entries, kept in the OS keychain (or the 0600 file
// beside the OAuth tokens), never in a config file. No command prints a
// value.
func newSecretCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Keep the values of ${secret:NAME} in the OS keychain",
		Long: `A server's env value, header, url or OAuth field may hold ${secret:NAME}: FreeCode
puts the secret's value there when it starts or connects to the server. The values are
kept in the OS keychain where one answers, else in ` + secretsFileHint() + ` (readable by you
alone), where FreeCode keeps OAuth sign-ins; never in a config file, and no command or
log shows one. FREECODE_TOKEN_STORE=file keeps them in the file.

A name is 1 to 128 of A-Z a-z 0-9 _ . -`,
	}
	cmd.AddCommand(newSecretSetCmd(a), newSecretRmCmd(a), newSecretLsCmd(a))
	return cmd
}

// secretsFileHint is where the file of secrets is, for help text.
func secretsFileHint() string {
	return filepath.Join("~", ".freecode", "auth", "tokens.json")
}

// openSecrets returns the user's secret store.
func openSecrets() (*secretstore.Store, error) {
	dir, err := config.SecretsDir()
	if err != nil {
		return nil, err
	}
	return secretstore.Open(dir), nil
}

func newSecretSetCmd(a *app) *cobra.Command {
	var fromStdin bool
	var project string
	cmd := &cobra.Command{
		Use:   "set NAME",
		Short: "Set a secret, typed without echo (or one line of standard input)",
		Long: `Set the secret NAME, which servers reference as ${secret:NAME}. On a terminal the value
is typed without being shown; with --stdin, or when standard input is not a terminal, it is
the first line of standard input (its line ending dropped). Setting it again replaces it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := secretstore.ValidName(name); err != nil {
				return err
			}
			store, err := openSecrets()
			if err != nil {
				return err
			}
			in := newSecretInput(cmd)
			var value string
			if fromStdin {
				value, err = in.line()
			} else {
				value, err = in.read(cmd.Context(), fmt.Sprintf("Value for %s (not shown): ", name))
			}
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("no value on standard input: secret %s not set", name)
			}
			if err != nil {
				return err
			}
			if value == "" {
				return fmt.Errorf("the value is empty: secret %s not set (`freecode secret rm %s` removes one)", name, name)
			}
			where, err := store.Set(cmd.Context(), name, value)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "✓ Saved secret %s in %s\n", name, termtext.Escape(where))
			users, err := a.secretUsers(project)
			switch {
			case err != nil:
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: which servers use it is not known: %s\n", termtext.EscapeLines(err.Error()))
			case len(users[name]) > 0:
				fmt.Fprintf(out, "  Used by %s.\n", userList(users[name]))
			default:
				fmt.Fprintf(out, "  No configured server references ${secret:%s} yet.\n", name)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the value from the first line of standard input, even on a terminal")
	cmd.Flags().StringVar(&project, "project", "", "also look for references in the project at `dir` (default: the current directory)")
	return cmd
}

func newSecretRmCmd(a *app) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a secret from the keychain and the file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := secretstore.ValidName(name); err != nil {
				return err
			}
			store, err := openSecrets()
			if err != nil {
				return err
			}
			err = store.Delete(cmd.Context(), name)
			if errors.Is(err, secretstore.ErrNotFound) {
				return fmt.Errorf("no secret named %s is set (`freecode secret ls` lists them)", name)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "✓ Removed secret %s\n", name)
			if users, err := a.secretUsers(project); err == nil && len(users[name]) > 0 {
				fmt.Fprintf(out, "  Still referenced by %s: they will not start until it is set again (`freecode secret set %s`).\n", userList(users[name]), name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "also look for references in the project at `dir` (default: the current directory)")
	return cmd
}

// secretRow is one line of `secret ls`, and one element of its --json.
type secretRow struct {
	Name    string       `json:"name"`
	Set     bool         `json:"set"`
	Where   string       `json:"where,omitempty"`   // secretstore.InKeyring or the file's path
	Invalid string       `json:"invalid,omitempty"` // why a referenced name cannot be set
	UsedBy  []secretUser `json:"usedBy"`
}

// secretUser is a server that references a secret.
type secretUser struct {
	Server string `json:"server"`
	Scope  string `json:"scope"` // config.ScopeUser or config.ScopeProject
}

func (u secretUser) String() string {
	if u.Scope == config.ScopeProject {
		return u.Server + " (project)"
	}
	return u.Server
}

// userList is users for a sentence: "a, b (project)".
func userList(users []secretUser) string {
	s := make([]string, len(users))
	for i, u := range users {
		s[i] = termtext.Escape(u.String())
	}
	return strings.Join(s, ", ")
}

func newSecretLsCmd(a *app) *cobra.Command {
	var asJSON bool
	var project string
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the secrets set, where each is kept and which servers use it, and those missing",
		Long: `List the names of the secrets set (never their values), where each is kept and which
servers reference it; then the names that servers of your config or of the project reference
but that are not set.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, err := openSecrets()
			if err != nil {
				return err
			}
			names, err := store.Names(ctx)
			if err != nil {
				return err
			}
			users, uerr := a.secretUsers(project)
			if uerr != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: which servers use them is not known: %s\n", termtext.EscapeLines(uerr.Error()))
			}
			rows := []secretRow{}
			for _, name := range names {
				r := secretRow{Name: name, UsedBy: users[name]}
				where, err := store.Where(ctx, name)
				switch {
				case err == nil:
					r.Set, r.Where = true, where
				case !errors.Is(err, secretstore.ErrNotFound):
					return err
				}
				// Listed but gone (removed from the keychain by hand):
				// it is missing.
				rows = append(rows, r)
			}
			for name, us := range users {
				if slices.Contains(names, name) {
					continue
				}
				r := secretRow{Name: name, UsedBy: us}
				if err := secretstore.ValidName(name); err != nil {
					r.Invalid = err.Error()
				}
				rows = append(rows, r)
			}
			slices.SortFunc(rows, func(x, y secretRow) int { return strings.Compare(x.Name, y.Name) })
			for i := range rows {
				if rows[i].UsedBy == nil {
					rows[i].UsedBy = []secretUser{}
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Secrets []secretRow `json:"secrets"`
				}{rows})
			}
			printSecrets(out, rows)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	cmd.Flags().StringVar(&project, "project", "", "also look for references in the project at `dir` (default: the current directory)")
	return cmd
}

// printSecrets writes ls's table: the secrets set, then those missing.
func printSecrets(w io.Writer, rows []secretRow) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "No secrets set, and no server references one.")
		fmt.Fprintln(w, "A server's env value, header, url or OAuth field may hold ${secret:NAME}; `freecode secret set NAME` keeps its value.")
		return
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(termtext.Escape(r.Name)))
	}
	var set, missing []secretRow
	for _, r := range rows {
		if r.Set {
			set = append(set, r)
		} else {
			missing = append(missing, r)
		}
	}
	if len(set) > 0 {
		whereWidth := 0
		for _, r := range set {
			whereWidth = max(whereWidth, len(termtext.Escape(r.Where)))
		}
		fmt.Fprintln(w, "Secrets (names only: no value is ever shown):")
		for _, r := range set {
			used := "used by no server"
			if len(r.UsedBy) > 0 {
				used = "used by " + userList(r.UsedBy)
			}
			fmt.Fprintf(w, "  %-*s  %-*s  %s\n", width, r.Name, whereWidth, termtext.Escape(r.Where), used)
		}
	}
	if len(missing) > 0 {
		if len(set) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "Missing (referenced, not set; those servers will not start):")
		for _, r := range missing {
			name := termtext.Escape(r.Name)
			fix := fmt.Sprintf("run `freecode secret set %s`", name)
			if r.Invalid != "" {
				fix = "not a valid name: use only A-Z a-z 0-9 _ . - in ${secret:…}"
			}
			used := "listed, but its value is gone"
			if len(r.UsedBy) > 0 {
				used = "used by " + userList(r.UsedBy)
			}
			fmt.Fprintf(w, "  %-*s  %s: %s\n", width, name, used, fix)
		}
	}
}

// secretUsers returns, by secret name, the servers that reference it: the
// user's config's, then the project's at dir (the current directory if
// empty) that no server of the user's shadows.
func (a *app) secretUsers(dir string) (map[string][]secretUser, error) {
	cfg, path, err := a.load()
	if err != nil {
		return nil, err
	}
	users := map[string][]secretUser{}
	add := func(s config.Server) {
		for _, name := range config.SecretRefs(s) {
			users[name] = append(users[name], secretUser{Server: s.Name, Scope: s.Scope})
		}
	}
	for _, s := range cfg.MCP.Servers {
		add(s)
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return users, nil
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	// At the home directory, the project's file is the user's own.
	if config.ProjectSettingsAreUsers(dir, path) {
		return users, nil
	}
	project, err := config.LoadProject(dir)
	if err != nil {
		return users, fmt.Errorf("the project's servers: %w", err)
	}
	for _, s := range project {
		if _, shadowed := cfg.Server(s.Name); !shadowed {
			add(s)
		}
	}
	return users, nil
}

// secretInput reads secrets a command is given: typed unseen on a
// terminal, else lines of standard input.
type secretInput struct {
	in     io.Reader
	br     *bufio.Reader // lines of in, for all but a real terminal
	prompt io.Writer
	tty    bool // isTerminal(in): prompts are shown
}

func newSecretInput(cmd *cobra.Command) *secretInput {
	in := cmd.InOrStdin()
	return &secretInput{in: in, br: bufio.NewReader(in), prompt: cmd.ErrOrStderr(), tty: isTerminal(in)}
}

// read returns one value: on a terminal after prompt, typed without echo;
// else the next line of input. io.EOF means there was none.
func (s *secretInput) read(ctx context.Context, prompt string) (string, error) {
	if !s.tty {
		return s.line()
	}
	fmt.Fprint(s.prompt, prompt)
	f, ok := s.in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		// A test's terminal (isTerminal says so): its lines.
		v, err := s.line()
		fmt.Fprintln(s.prompt)
		return v, err
	}
	v, err := readHidden(ctx, int(f.Fd()))
	// The Enter typed was not echoed either.
	fmt.Fprintln(s.prompt)
	return v, err
}

// line returns the next line of input without its line ending; io.EOF if
// there is none.
func (s *secretInput) line() (string, error) {
	v, err := s.br.ReadString('\n')
	if errors.Is(err, io.EOF) && v != "" {
		err = nil
	}
	if err != nil {
		return "", err
	}
	v = strings.TrimSuffix(v, "\n")
	return strings.TrimSuffix(v, "\r"), nil
}

// readHidden reads a line from the terminal fd with echo off. Ctrl-C
// cancels ctx rather than killing freecode (main's signal handling), and
// term.ReadPassword cannot be interrupted: then the terminal is restored
// here and the read is left behind, the command ending with ctx's error.
func readHidden(ctx context.Context, fd int) (string, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	type answer struct {
		b   []byte
		err error
	}
	done := make(chan answer, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		done <- answer{b, err}
	}()
	select {
	case a := <-done:
		return string(a.b), a.err
	case <-ctx.Done():
		term.Restore(fd, state)
		return "", context.Cause(ctx)
	}
}
