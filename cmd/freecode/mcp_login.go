package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/freecode/freecode/config"
	"github.com/freecode/freecode/internal/termtext"
	"github.com/freecode/freecode/internal/tokenstore"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
)

// authOptions are the OAuth options of the CLI's connects: the user's
// tokens (oauth.DefaultStore), whatever config file runs.
func authOptions() *oauth.Options {
	tokens, _ := oauth.DefaultStore() // without one, each use says why
	return &oauth.Options{Tokens: tokens}
}

// remoteServer returns the named server, which must be remote.
func (a *app) remoteServer(name string) (config.Server, error) {
	cfg, path, err := a.load()
	if err != nil {
		return config.Server{}, err
	}
	srv, err := lookup(cfg, path, name)
	if err != nil {
		return config.Server{}, err
	}
	if srv.Type != config.TypeRemote {
		return config.Server{}, fmt.Errorf("%q is a local server: only remote servers have a sign-in", name)
	}
	return srv, nil
}

func newMCPLoginCmd(a *app) *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login <name>",
		Short: "Sign in to a remote MCP server (OAuth) and keep its tokens",
		Long: `Sign in to a remote MCP server that asks for an OAuth sign-in: FreeCode finds the
server's authorization server, registers itself with it (the server entry's oauth.clientId,
else its oauth.clientMetadataUrl, else dynamic registration, which is kept for the next
sign-in), opens the sign-in page in your browser ($BROWSER if set) and waits for the browser
to come back to 127.0.0.1.

The tokens are kept in the OS keychain, or where none is available in a file only you can
read in ~/.freecode/auth (whatever --config names), and refreshed when they expire. Servers then connect without
asking again until the sign-in lapses; ` + "`freecode mcp logout <name>`" + ` deletes them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := a.remoteServer(args[0])
			if err != nil {
				return err
			}
			srv.Enabled = true
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opened := false
			open := func(ctx context.Context, u string) error {
				opened = true
				showSignIn(ctx, stderr, fmt.Sprintf("Sign in to %q in your browser.", srv.Name), u, noBrowser)
				return nil
			}
			opts := authOptions()
			conn := mcp.NewConn(srv, &mcp.ConnOptions{NoRetry: true, Auth: opts})
			loginErr := conn.Login(ctx, open)
			st := conn.Status()
			conn.Close()
			if loginErr != nil {
				reason := strings.TrimPrefix(loginErr.Error(), "starting "+srv.Name+": ")
				if ctx.Err() != nil {
					reason = "interrupted"
				}
				fmt.Fprintf(stderr, "✗ Signing in to %q failed: %s\n", srv.Name, termtext.EscapeLines(reason))
				return exitError(1)
			}
			if !opened {
				fmt.Fprintf(stdout, "✓ %q connected without a sign-in: the server does not ask for one (%d %s)\n",
					srv.Name, st.ToolCount, plural(st.ToolCount, "tool", "tools"))
				return nil
			}
			fmt.Fprintf(stdout, "✓ Signed in to %q; connected with %d %s\n", srv.Name, st.ToolCount, plural(st.ToolCount, "tool", "tools"))
			switch where, err := oauth.TokenLocation(ctx, srv, opts); {
			case err != nil:
				fmt.Fprintf(stderr, "note: the tokens could not be stored, so the next run will ask again: %s\n", termtext.EscapeLines(err.Error()))
			case where == tokenstore.InKeyring:
				fmt.Fprintln(stdout, "  tokens kept in the OS keychain")
			default:
				fmt.Fprintf(stdout, "  tokens kept in %s (readable by you only)\n", termtext.Escape(opts.Tokens.Path()))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "print the sign-in URL instead of opening a browser")
	return cmd
}

// showSignIn shows a sign-in page as every sign-in of the CLI does: the
// headline and the URL on w, for the user to open by hand, then the page
// in the browser ($BROWSER if set) unless noBrowser.
func showSignIn(ctx context.Context, w io.Writer, headline, u string, noBrowser bool) {
	fmt.Fprintf(w, "%s If it does not open, visit:\n\n  %s\n\n", headline, termtext.Escape(u))
	if !noBrowser {
		if err := oauth.OpenBrowser(ctx, u); err != nil {
			fmt.Fprintf(w, "(no browser could be opened: %s)\n", termtext.EscapeLines(err.Error()))
		}
	}
	fmt.Fprintln(w, "Waiting for the sign-in to finish in the browser… (Ctrl-C to stop)")
}

func newMCPLogoutCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "logout <name>",
		Short: "Sign out of a remote MCP server: revoke and delete its OAuth tokens",
		Long: `Delete the tokens FreeCode keeps for a remote MCP server, and ask its authorization
server to revoke them (RFC 7009) where it offers that. The server then needs
` + "`freecode mcp login <name>`" + ` again. A FreeCode process connected with those tokens stops
using them at their next refresh, or at its next request where they were revoked.

Tokens the authorization server could not revoke (it offers no revocation, or did not
answer) are deleted all the same, and stay valid there until they expire; the command
says so. The client FreeCode registered with the server is kept for the next sign-in.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := a.remoteServer(args[0])
			if err != nil {
				return err
			}
			res, err := mcp.SignOut(cmd.Context(), srv, nil, authOptions())
			if err != nil {
				return err
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			switch {
			case !res.Had:
				fmt.Fprintf(stdout, "%q had no stored sign-in\n", srv.Name)
			case res.Revoked:
				fmt.Fprintf(stdout, "✓ Signed out of %q: its tokens were revoked by the authorization server and deleted\n", srv.Name)
			case errors.Is(res.RevokeErr, oauth.ErrNoRevocation):
				fmt.Fprintf(stdout, "✓ Signed out of %q: its tokens were deleted\n", srv.Name)
				fmt.Fprintf(stderr, "note: %s, so they stay valid there until they expire\n", termtext.EscapeLines(res.RevokeErr.Error()))
			default:
				fmt.Fprintf(stdout, "✓ Signed out of %q: its tokens were deleted\n", srv.Name)
				fmt.Fprintf(stderr, "warning: the authorization server did not revoke them, so they stay valid there until they expire: %s\n",
					termtext.EscapeLines(res.RevokeErr.Error()))
			}
			return nil
		},
	}
}

// signInHint is the line that tells how to sign in after err, or "".
func signInHint(err error, name string) string {
	if !errors.Is(err, oauth.ErrNeedsAuth) {
		return ""
	}
	return "  sign in with: freecode mcp login " + name
}

// describeOAuth prints a server entry's oauth key, its secret hidden (o is
// redacted already).
func describeOAuth(w io.Writer, o *config.OAuth) {
	var parts []string
	if o.ClientID != "" {
		parts = append(parts, "client id "+o.ClientID)
	}
	if o.ClientSecret != "" {
		parts = append(parts, "client secret "+o.ClientSecret)
	}
	if o.ClientMetadataURL != "" {
		parts = append(parts, "client metadata "+o.ClientMetadataURL)
	}
	if len(o.Scopes) > 0 {
		parts = append(parts, "scopes "+strings.Join(o.Scopes, " "))
	}
	if o.CallbackPort != 0 {
		parts = append(parts, fmt.Sprintf("callback port %d", o.CallbackPort))
	}
	if len(parts) == 0 {
		parts = append(parts, "dynamic client registration")
	}
	fmt.Fprintf(w, "  oauth:     %s\n", termtext.Escape(strings.Join(parts, ", ")))
}
