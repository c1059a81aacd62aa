// Sequential `echo` round trips through the TypeScript MCP SDK client, over
// Streamable HTTP or legacy SSE: the peer that mcp/remote_bench_test.go
// compares FreeCode's remote client with, against the same server.
//
//   node bench/ts-remote-client.mjs <url> <http|sse> <calls>
//
// Prints one JSON line: {"calls": n, "seconds": s, "callsPerSec": r}.
// The SDK is loaded from $FREECODE_NPM (interop/node_modules).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [url, transport, callsArg] = process.argv.slice(2);
const calls = Number(callsArg || 1000);
const npm = process.env.FREECODE_NPM;
if (!url || !['http', 'sse'].includes(transport) || !npm || !(calls > 0)) {
  console.error('usage: FREECODE_NPM=… node ts-remote-client.mjs <url> <http|sse> <calls>');
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(path.join(npm, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { SSEClientTransport } = await sdk('client/sse.js');

const client = new Client({ name: 'freecode-bench', version: '0' }, { capabilities: {} });
const t = transport === 'http'
  ? new StreamableHTTPClientTransport(new URL(url))
  : new SSEClientTransport(new URL(url));
await client.connect(t);

const echo = (i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
for (let i = 0; i < 50; i++) await echo(i); // warm up: JIT, connections
const start = process.hrtime.bigint();
for (let i = 0; i < calls; i++) {
  const res = await echo(i);
  if (res.content[0].text !== `Echo: m${i}`) throw new Error(`bad echo: ${JSON.stringify(res)}`);
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ calls, seconds, callsPerSec: calls / seconds }));
await client.close();
process.exit(0);
