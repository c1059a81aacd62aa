// Package mcp is FreeCode's MCP client: one [Conn] per configured server,
// and a [Manager] that keeps the set of Conns in line with the config.
//
// # A Conn
//
// A Conn is one server entry (config.Server) brought to life: it starts a
// local server as a subprocess speaking MCP over stdio, or dials a remote
// one over Streamable HTTP or the older HTTP+SSE transport (transport
// "auto" tries the first, then the second); it negotiates the protocol
// (negotiate.go: the newest version's server/discover, else initialize),
// lists every page of the server's tools, and then serves calls
// ([Conn.CallTool]), resource reads and prompt gets, while a supervisor
// goroutine pings the server, relists on list_changed and reconnects a
// session that is lost. A connect is transport up, the protocol
// negotiated, the tools listed and the log level sent, all within the
// server's timeout (a package runner such as npx gets the time its install
// needs: runner.go).
//
// Its life is a [State], reported with everything else a frontend shows in
// a [Status]:
//
//	connecting ─▶ connected ─(session lost)─▶ reconnecting ─▶ connected
//	     │                                          │
//	     └─(tries used up)─▶ failed ◀─(tries used up)┘
//	connecting, connected ─(a sign-in nobody can give now)─▶ needsAuth
//	any ─(Close, Manager.Stop)─▶ stopped
//	idle: a server started on demand that is not running (ondemand.go)
//	disabled, awaitingApproval: the Manager's, for entries it does not start
//
// A failed connect is retried with backoff (0.5 s doubling to 30 s,
// jittered, six tries); a session that dies within a minute of coming up
// does not give its tries back. [ConnOptions].NoRetry is for one-shot
// commands. While a server reconnects its tools stay, and calls wait for
// it within their own deadline. [Conn.Reconnect] ends the live session at
// once (a restart by hand); [Conn.Close] ends the Conn for good.
//
// # The Manager
//
// A Manager holds one Conn per entry. [Manager.Apply] takes the whole
// config each time: added servers start, removed ones stop, changed ones
// restart, the rest are left alone, and the starts and stops run in the
// background as the Manager's (they outlive the ctx of the Apply). Start,
// Stop, Restart, Login and Logout act on one server by name, one at a time
// per server. A server on demand is registered from its manifest without
// starting ([ManagerOptions].Manifest) and started by [Manager.Acquire].
//
// # What callers must know
//
// News goes up through callbacks, never through a return: OnStatus,
// OnLog and OnNotice of [ConnOptions], OnToolsChanged and OnListChanged of
// [ManagerOptions]. They are called from the Conns' goroutines, holding
// none of the package's locks but a Conn's handoverMu (below), and must
// not block: a slow consumer must queue (the workspace's fan-out does). ClientOptions and OnClient are the
// exception: NewConn calls them, and the Manager calls NewConn holding its
// own lock, so they must not call the Manager.
//
// A server may ask the client something during a request (elicitation,
// sampling, a sign-in for more access): the [Asker] the request brings
// ([CallOptions], [FollowOptions]) is asked, and nobody else (asker.go). Everything a Conn shows or logs (Status,
// errors, the stderr tail) has the session's secrets masked: a local
// server's env values, a remote one's header values, URL secrets and OAuth
// tokens (redact.go).
//
// Locks: a Conn's mu guards its state and is never held across a call out
// (a status is emitted once it is released). Its handoverMu is held while a
// new session's tools go to OnToolsChanged, so that [Conn.Wait] returns
// only once they are handed over: OnToolsChanged must not wait for that
// Conn. inflightMu and progressMu are leaves. The Manager's mu guards its
// entries, and each entry's opMu serializes that server's starts and
// stops; opMu is taken before mu, never after.
//
// # Where the rest lives
//
// Three parts others reuse or that stand alone are packages of their own,
// none of which imports this one:
//
//   - internal/mcpwire, the wire `freecode mcp serve` shares with the
//     client: the stdio JSON-RPC codec (the noise-tolerant line filter,
//     the envelope decoder, the line writer), over which stdioconn.go is
//     the Conn's transport;
//   - mcp/proc, the local servers' processes: process groups, the
//     environment's allow-list, the stop sequence, run records and the
//     subreaper, so that no server outlives FreeCode;
//   - mcp/oauth, the OAuth sign-in of remote servers, which the Conn gives
//     its HTTP client and its redactor (signin.go is where they meet).
package mcp
