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
// Reading is in two layers. A [Filter] cuts a stream into lines and hands on
// only those that are one JSON value, since real servers print banners, log
// lines and JSON log records to stdout and a JSON-RPC decoder takes any of
// them as fatal: it skips (and logs, masked) what is not JSON, drains a line
// over its cap without holding more of it than the cap, and turns an answer
// it must drop (too large, nested deeper than [MaxDepth]) into an error
// answer for its id, so the call it answers fails at once, saying why. Its
// reader then decodes each line with [Decode], which reads the common
// shapes of an envelope in one scan ([DecodeEnvelope]) and takes
// encoding/json for the rest; the go-sdk's own decoder allocates a 32 KiB
// buffer per message (docs/upstream/go-sdk-json-decoder.md). mcpserve, which
// must refuse what the SDK refuses, falls back to the SDK's decoder instead.
//
// Writing is one [Writer] per stream: every message one line in one write,
// so concurrent writers never interleave, encoded by [AppendMessage], which
// writes a request or a result envelope around the SDK's already compact
// params or result instead of encoding the whole message again.
//
// The stdio part knows JSON-RPC, not MCP: no method but
// notifications/progress is named there (the Filter's OnProgress).
package mcpwire
