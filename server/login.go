package server

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/freecode/freecode/internal/protocol"
	"github.com/freecode/freecode/mcp"
	"github.com/freecode/freecode/mcp/oauth"
	"github.com/freecode/freecode/workspace"
)

// Signing in to a remote server (OAuth) shows the user the authorization
// server's page in a browser of their machine, which the sidecar may not
// be able to open: it may run headless, or in a container. So it asks a
// frontend, with LSP's window/showDocument { uri, external: true }, which
// an editor answers by opening the page in the user's browser. Which
// frontend:
//
//   - freecode/servers/login: the frontend that sent it;
//   - a server that asks for more access during a session (OAuth step-up):
//     the frontend whose request met the demand (a tool call, a resource
//     read), through that request's Asker (relay.go); a request of no
//     frontend's (a background request of the sidecar's) has none, and the
//     sidecar's own opener shows the page.
//
// A frontend that did not declare window.showDocument in initialize, or
// answers it with an error or success: false, leaves the page to the
// sidecar's own opener (oauth.OpenBrowser: $BROWSER, else the system's).
// Either way the frontend is first sent the URL in window/logMessage, so
// the user can open it by hand when nothing else can.

// login is freecode/servers/login: it answers once the user signed in and
// the server connected, or once the sign-in failed (the status says
// needsAuth, with why in lastError). A local server has no sign-in.
func (sess *session) login(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return sess.serverOp(ctx, params, "signing in", func(w *workspace.Workspace, ctx context.Context, name string) (mcp.Status, error) {
		if st, err := remoteOnly(w, name, "signing in to"); err != nil {
			return st, err
		}
		return w.Login(ctx, name, func(ctx context.Context, url string) error {
			return sess.openURL(ctx, url, fmt.Sprintf("Sign in to the MCP server %q", name))
		})
	})
}

// logout is freecode/servers/logout: the server stops, its stored sign-in
// is deleted and its tokens revoked where the authorization server offers
// that; a failure to revoke them is the status's lastError.
func (sess *session) logout(ctx context.Context, params jsonrpc2.RawMessage) (any, error) {
	return sess.serverOp(ctx, params, "signing out", func(w *workspace.Workspace, ctx context.Context, name string) (mcp.Status, error) {
		if st, err := remoteOnly(w, name, "signing out of"); err != nil {
			return st, err
		}
		return w.Logout(ctx, name)
	})
}

// remoteOnly refuses a sign-in or sign-out of a local server, which has
// none.
func remoteOnly(w *workspace.Workspace, name, verb string) (mcp.Status, error) {
	for _, st := range w.Statuses() {
		if st.Name == name && st.Type != "remote" {
			return st, jsonrpc2.NewError(jsonrpc2.InvalidRequest, fmt.Sprintf("%s %q: a local server has no sign-in", verb, name))
		}
	}
	return mcp.Status{}, nil
}

// openURL shows the user url, a sign-in page, for the reason why: the URL
// in window/logMessage, then window/showDocument if the frontend takes it,
// else the sidecar's opener.
func (sess *session) openURL(ctx context.Context, url, why string) error {
	sess.logMessage(lsp.MessageTypeInfo, fmt.Sprintf("%s: open %s", why, url))
	if sess.takesShowDocument() {
		err := sess.showDocument(ctx, url)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sess.logger.Info("the frontend did not open the sign-in page; opening it here", "error", err)
	}
	return oauth.OpenBrowser(ctx, url)
}

// showDocument asks the frontend to open url in the user's browser.
func (sess *session) showDocument(ctx context.Context, url string) error {
	external := true
	var res lsp.ShowDocumentResult
	if err := lsp.Call(ctx, sess.conn, protocol.MethodShowDocument, &lsp.ShowDocumentParams{URI: uri.URI(url), External: &external}, &res); err != nil {
		return err
	}
	if !res.Success {
		return errors.New("window/showDocument answered success: false")
	}
	return nil
}

// openURL is the workspace's OpenURL: a server asks for more access in a
// live session during a request that no frontend made (a health ping, a
// re-list after list_changed), which has no Asker to show the page. No
// frontend is guessed at: the sidecar's own opener shows it.
func (s *Server) openURL(ctx context.Context, url string) error {
	s.logger.Info("a server asks for more access during a request of no frontend's; opening the sign-in page here")
	return oauth.OpenBrowser(ctx, url)
}
