// A minimal MCP server: initialize, tools/list and ping; every other request is unknown.
export function answer(msg) {
  if (msg.id === undefined) return null;
  switch (msg.method) {
    case "initialize":
      return { jsonrpc: "2.0", id: msg.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "freecode-npx-probe", version: "1.0.0" } } };
    case "tools/list":
      return { jsonrpc: "2.0", id: msg.id, result: { tools: [{ name: "hello", inputSchema: { type: "object" } }] } };
    case "ping":
      return { jsonrpc: "2.0", id: msg.id, result: {} };
  }
  return { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "method not found" } };
}
