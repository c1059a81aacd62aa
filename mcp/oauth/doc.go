// Package oauth is the OAuth sign-in of FreeCode's remote MCP servers (the
// MCP authorization spec, 2025-11-25). The go-sdk's auth package does the
// protocol: discovery of the protected resource's and the authorization
// server's metadata, client registration, the authorization code flow with
// PKCE and the resource parameter. What FreeCode adds around it lives here:
//
//   - a [Flow] per connect attempt, the auth.OAuthHandler the Streamable
//     HTTP transport asks for tokens and calls on a 401 or a 403 (and, for
//     the legacy SSE transport, which takes no handler, [Flow.Send]);
//   - tokens kept between runs (internal/tokenstore: the OS keychain or a
//     0600 file, [DefaultStore]) and refreshed a minute before they expire,
//     re-read from the store first so that two FreeCode processes sharing a
//     sign-in do not spend each other's refresh tokens (store.go), and a
//     dynamically registered client kept beside them and used again when it
//     fits (client.go);
//   - signing out, which deletes the tokens and then has them revoked
//     ([SignOut], revoke.go);
//   - the interactive part, only when the user asked for it (a Flow made
//     with a Login opener) or a live session needs more scopes and someone
//     can answer (the person behind the refused request, FlowConfig.StepUp,
//     else [Options].OpenURL): the page shown through an
//     [OpenURLFunc] ([OpenBrowser] by default, which hands the browser a
//     0600 page that redirects to it, never the URL: see browserfile), a
//     loopback callback on 127.0.0.1 with a one-time state that, on
//     Linux, takes no answer from another local user's socket, a bounded
//     wait (callback.go, peer.go).
//
// A connect never opens a browser by itself: without usable tokens the
// Flow records why ([Flow.NeedsAuth], an [ErrNeedsAuth]) and the connect
// fails with it.
//
// The seam to the MCP client (package mcp) is small, and the client owns
// everything about reaching a server: a Flow never dials by itself but is
// given the HTTP client of its requests ([Flow.Bind], a [NewClient] for
// [SignOut]), built under the server's URL policy and TLS settings; it
// hands every secret it learns (tokens, codes, client secrets) to the
// session's redactor (FlowConfig.OnRedactor), so that no log, status or
// error shows one; and it tells the session it must end
// ([Flow.Connected]'s lost) when a refresh is refused or the sign-in was
// deleted elsewhere, so that the Conn reconnects and finds it needs a
// sign-in. The package imports nothing of the client's; mcp.Conn.Login,
// mcp.Manager.Login and Logout and mcp.SignOut are where the two meet.
//
// Its tests sign in through the real client (an mcp.Conn against
// internal/oauthtest's authorization server), from package oauth_test.
package oauth
