// Package mcpwire is the MCP wire that FreeCode's client (package mcp) and
// server (package mcpserve) share, in one place, so that neither side
// imports the other. It holds what the two share and nothing of either's
// session.
//
// Its stdio part is the newline-delimited JSON-RPC of MCP's stdio
// transport, as both of FreeCode's stdio ends speak it: the client's, to a
// local server's stdin and from its stdout, and the server's,
// `freecode mcp serve --stdio`.
//
// Both ends read the same way. A [LineReader] cuts the stream into lines
// (without a copy when a line fits its buffer, never holding more of one
// than the cap), and a [Reader] hands the go-sdk one message at a time, a
// batch's from its queue, taking what each line holds from its end's
// [Source]. The client's lines come through a [Filter], which hands on only
// those that are one JSON value, since real servers print banners, log lines and
// JSON log records to stdout and a JSON-RPC decoder takes any of them as
// fatal: it skips (and logs, masked) what is not JSON, drains a line over
// its cap, and turns an answer it must drop (too large, nested deeper than
// [MaxDepth]) into an error answer for its id, so the call it answers fails
// at once, saying why. The client decodes each line with [Decode], which
// reads the common shapes of an envelope in one scan ([DecodeEnvelope])
// and takes encoding/json for the rest; the go-sdk's own decoder allocates
// a 32 KiB buffer per message (docs/upstream/go-sdk-json-decoder.md).
// mcpserve, which must refuse what the SDK refuses, falls back to the SDK's
// decoder instead, and ends the session on a line the SDK would refuse.
//
// Writing is one [Writer] per stream: every message one line in one write,
// so concurrent writers never interleave, encoded by [AppendMessage], which
// writes a request or a result envelope around the SDK's already compact
// params or result instead of encoding the whole message again.
//
// The stdio part knows JSON-RPC, not MCP: no method but
// notifications/progress is named there (the Filter's OnProgress).
//
// Over Streamable HTTP, both the gateway and the test servers serve every
// revision at once through a [RevisionRouter] (sessions for the older
// revisions, none from [StatelessSince]) behind [RoutingHeaders].
//
// The tasks extension (tasks.go) is the [Task] as the wire carries it, its
// methods, params, results and error codes, and what a server checks of a
// request ([RequireTasks]): the client's mcp/tasks, the gateway and the
// test servers' engine (internal/mcptasks) all speak it through these.
package mcpwire
