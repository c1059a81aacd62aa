// Package mcpserve is FreeCode's own MCP server: the go-sdk's server in front
// of a workspace.Workspace, so that any MCP client gets every tool of the
// user's servers (and FreeCode's built-ins) through one governed endpoint.
// `freecode mcp serve` runs it over stdio or Streamable HTTP.
//
// # Every call goes through the orchestrator
//
// A tools/call is one workspace.Execute batch: the arguments are validated
// against the tool's schema, the permission rules in force decide, the
// server's toolTimeout bounds the call and the result cap applies, exactly
// as for the sidecar's frontends. Nothing reaches an MCP server around it.
//
//   - deny: the result is a tool error (isError) whose text names the rule
//     and the file it is in.
//   - ask: when the calling client declared the elicitation capability
//     (form mode), it gets a form with two choices, allow once or deny;
//     declining or cancelling the form denies. A client of 2025-11-25 or
//     older is sent the form as an elicitation/create request while the
//     call runs; one of 2026-07-28 gets it in an input_required result
//     (see "Protocol versions"). An
//     "always allow" is not offered: it would write an allow rule into the
//     user's settings on the word of a client, which may be software
//     answering for no one, and widen what every other FreeCode frontend
//     runs unasked. The form shows the arguments whole when they fit in
//     2,000 characters; longer ones are listed with every key and only
//     long values cut, and such a call is offered deny alone and denied
//     whatever the answer, since what the user did not see could be what
//     matters. A client without the capability gets a denial whose text
//     names the rule to add.
//   - progress: a call whose request carries a progress token gets the
//     server's notifications/progress relayed under that token.
//   - cancellation: notifications/cancelled cancels the call's context,
//     which the orchestrator passes to the server's call.
//   - tracing: a W3C trace context in the call's params._meta
//     (traceparent, tracestate), as FreeCode sends its own to its
//     servers, is the parent of the call's batch span
//     (orchestrator.ExecOptions.TraceParent), so the client's trace goes
//     on through FreeCode to the server; without one, or with one that is
//     no traceparent, the call starts a trace of its own.
//   - results: the content, structuredContent and isError of the
//     orchestrator's result, after its cap. Its decision ("allowed",
//     "asked", "denied", "invalid") and, for a cut result, what was cut
//     ride in _meta under "freecode/decision" and "freecode/truncated";
//     a call whose answer its server lost and that was not sent again
//     (neither read-only nor idempotent) has "freecode/outcomeUnknown":
//     true, and its text says "outcome unknown, not retried".
//   - tasks: a client that declares the tasks extension
//     (io.modelcontextprotocol/tasks) on its call gets the task its
//     server answers with, after the same decision, under the id
//     "<server>.<the server's id>", and its tasks/get, tasks/update and
//     tasks/cancel reach that task through the workspace (tasks.go); any
//     other client gets the call's end.
//     When the cap dropped the structuredContent of a tool that declares
//     an outputSchema, the result is marked isError: MCP clients reject a
//     successful result without the structured content the schema
//     promises, and the text says where the whole result was saved.
//
// # The tools list
//
// tools/list holds the registry's tools (workspace.Tools) with their
// original input and output schemas (not a provider's conversion), their
// titles and descriptions, and the annotations readOnlyHint,
// destructiveHint, idempotentHint and openWorldHint as the orchestrator
// reads them (with the MCP defaults applied). The list is a model's:
// a tool no model may be shown is not in it, neither one awaiting review
// that is hidden nor one for its server's MCP Apps view alone (its
// _meta.ui.visibility lacks "model"). A
// tool is listed under the name a provider sees: its id
// (mcp__<server>__<tool>, or the built-in's name) or, when the id is
// longer than 64 characters, its alias. MCP clients hand tool names to
// models, so they meet the same 64-character limit providers set; the
// alias is what FreeCode's rules and the sidecar already accept for that
// tool. Only listed names can be called: any other name, including the
// long id of an aliased tool or a variant in case or Unicode, is an
// unknown tool.
//
// The list follows the workspace: on every *workspace.ToolSetEvent (a
// tool came, went or changed) the server adds, replaces and removes
// tools, and the go-sdk sends notifications/tools/list_changed to every
// session. A project's servers are in the registry only once the user
// approved them, so an unapproved server of a cloned repository is never
// listed nor callable.
//
// # One FreeCode server
//
// With Options.Server, the server is one FreeCode server's: it lists that
// server's tools alone, under the names the server gives them (read_file,
// not mcp__fs__read_file), so that a client that groups tools by MCP
// server (VS Code's chat) shows FreeCode's servers as the user named them.
// A call of such a name runs as the tool's id, through the same
// workspace.Execute, rules and review; the list follows that server
// (empty while it is not connected, filled as it connects, emptied and
// filled again as it restarts) with tools/list_changed. The sidecar serves
// one such server per FreeCode server over its own workspace
// (freecode/gateway/open), with Options.Frontend naming the calls in the
// audit trail "vscode-chat:<server>".
//
// Deferred tools (mcp.deferTools) are listed like any other: deferral
// shapes the arrays sent to model providers, while an MCP client decides
// for itself what its model sees.
//
// # Protocol versions
//
// The server speaks MCP 2024-11-05 to 2026-07-28. The older revisions
// begin with initialize; 2026-07-28 has no session: a client may call
// server/discover, and every request carries the revision, the client's
// capabilities and its identity in _meta, which the go-sdk reads per
// request (the capabilities decide whether the client can be asked).
// For such a client:
//
//   - tools/list and server/discover carry caching hints (ttlMs of a
//     minute, cacheScope "private": the list is the user's);
//   - list changes reach the clients that listen (subscriptions/listen)
//     as notifications/tools/list_changed. The server holds at most 16
//     listen streams per client (the name its clientInfo gives: the
//     token is the user's, not a client's) and 128 in all; a listen past
//     either is refused at once with the JSON-RPC error -32000 (over HTTP
//     in the stream's one event), whose message says the cap and how many
//     are open and whose data is {"limit", "open", "scope": "client" or
//     "server"} (limits.go);
//   - the permission ask is an input_required result: its input request
//     "freecode/permission" is the form, and its requestState is bound,
//     by an HMAC under a key the server makes at start, to the call (the
//     tool, its arguments as shown, the definition under review) and to
//     an expiry ten minutes on. The client calls again with the answer
//     and that state; an answer counts only with a state of this call,
//     unexpired and not used before, so one "allow once" runs one call.
//     A state that fails any of these denies the call and says why; an
//     answer without a state asks again. A server with a StateDir
//     (freecode mcp serve keeps it with the user's secrets) keeps the key
//     and the answers taken there, in 0600 files, so a state outlives a
//     restart and is still used once, whichever server takes it; one
//     without refuses the states of the server before it, saying so.
//
// Over HTTP, each request of Path goes to the go-sdk handler of its
// revision (the SDK serves 2026-07-28 only statelessly, the older
// revisions' sessions only statefully): a request of a session, and any
// GET or DELETE, to the sessions; a POST whose MCP-Protocol-Version is
// 2026-07-28 to the stateless handler, which checks that header against
// _meta and Mcp-Method and Mcp-Name against the body, and refuses what the
// revision removed (initialize, ping, logging/setLevel); any other POST to
// the sessions if it is an initialize or a batch, else to the stateless
// handler. Over stdio one session serves either, each message by the
// revision it names: a call whose _meta names 2026-07-28 is served as one
// request of that revision, a JSON-RPC batch holding one is refused
// (its calls answered with errors; the session goes on), and on a session
// that never initialized a call naming no revision is refused instead of
// served under the revision of the calls before it.
//
// The server declares the prompts capability and lists none: the go-sdk
// answers prompts/list whatever the capabilities say, and 2026-07-28
// requires a server that answers it to declare it.
//
// # HTTP
//
// Handler serves Streamable HTTP at /mcp. Listen binds loopback unless
// remote binds are explicitly allowed, and Handler checks, before
// anything else:
//
//   - Host (DNS rebinding, MCP 2025-11-25 security best practices): on a
//     loopback bind the Host header must name the bound address or
//     "localhost", with the bound port; anything else is 403. The go-sdk's
//     own check (a request that reached a loopback listener with a Host
//     that is not loopback is refused) stays on beneath it; ours also
//     refuses another loopback address or port.
//   - Origin: a present Origin must be a loopback origin (http or https
//     on localhost, 127.0.0.0/8 or ::1); anything else is 403. No CORS
//     headers are sent, so no web page can read a response.
//   - Authorization: unless the server runs without a token (loopback
//     only), every request must carry "Authorization: Bearer <token>";
//     the token is compared in constant time, and a missing or wrong one
//     is 401 with WWW-Authenticate: Bearer.
//
// The token is kept, with the server's URL, in a 0600 file in the user's
// 0700 ~/.freecode/auth (mcp-serve.json), never beside a config file that
// may sit in a repository; see ServeFilePath, LoadToken and WriteServeFile.
//
// The legacy HTTP+SSE transport (2024-11-05) is served at SSEPath (GET
// opens the stream, whose endpoint event names SSEPath?sessionid=… for the
// client's POSTs), behind the same Host, Origin and token checks, for the
// clients that speak only it.
package mcpserve
