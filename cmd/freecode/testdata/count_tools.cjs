// count_tools.cjs: an independent MCP client (the official TypeScript SDK)
// that connects to a stdio server and prints how many tools tools/list
// returns. Used by the interop tests to cross-check `freecode mcp start`.
//
// Usage: FREECODE_NPM=… node count_tools.cjs [--env K=V]… [--capabilities JSON] -- <command> [args…]
//
// Some servers list more tools to a client that declares more capabilities
// (server-everything adds one for roots), so the caller passes the same
// client capabilities as the client it cross-checks.
const path = require("node:path");
const npm = process.env.FREECODE_NPM;
if (!npm) {
  console.error("FREECODE_NPM is not set");
  process.exit(2);
}
// Resolve the SDK from the interop package that owns FREECODE_NPM.
const req = require("node:module").createRequire(path.join(npm, "..", "package.json"));
const { Client } = req("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = req("@modelcontextprotocol/sdk/client/stdio.js");

const argv = process.argv.slice(2);
const env = { PATH: process.env.PATH, HOME: process.env.HOME };
let capabilities = {};
while (argv.length && argv[0] !== "--") {
  const flag = argv.shift();
  const value = argv.shift();
  if (flag === "--env" && value !== undefined) {
    const i = value.indexOf("=");
    env[value.slice(0, i)] = value.slice(i + 1);
  } else if (flag === "--capabilities" && value !== undefined) {
    capabilities = JSON.parse(value);
  } else {
    console.error("usage: count_tools.cjs [--env K=V]… [--capabilities JSON] -- <command> [args…]");
    process.exit(2);
  }
}
argv.shift();

(async () => {
  const client = new Client({ name: "count-tools", version: "1.0.0" }, { capabilities });
  const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), env, stderr: "ignore" });
  await client.connect(transport);
  let n = 0;
  let cursor;
  for (let page = 0; page < 1000; page++) {
    const res = await client.listTools(cursor ? { cursor } : {});
    n += res.tools.length;
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  console.log(n);
  await client.close();
  process.exit(0);
})().catch((err) => {
  console.error(String(err && err.stack || err));
  process.exit(1);
});
