// Sequential tools/call round trips over stdio with the TypeScript SDK
// client, for mcp/bench_test.go. Prints one JSON line:
// {"calls":N,"seconds":S,"callsPerSec":R}.
//
// usage: node ts-stdio-client.mjs WARMUP N '<arguments JSON>' command [args...]
// The server's environment is this process's. FREECODE_NPM points at the
// node_modules that hold @modelcontextprotocol/sdk.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const npm = process.env.FREECODE_NPM;
if (!npm) {
  console.error('FREECODE_NPM is not set');
  process.exit(2);
}
const sdk = (p) => pathToFileURL(path.join(npm, '@modelcontextprotocol/sdk/dist/esm', p)).href;
const { Client } = await import(sdk('client/index.js'));
const { StdioClientTransport } = await import(sdk('client/stdio.js'));

const [warmArg, nArg, argsJSON, command, ...args] = process.argv.slice(2);
const warm = Number(warmArg);
const n = Number(nArg);
const toolArgs = JSON.parse(argsJSON);

const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'ignore' });
const client = new Client({ name: 'ts-bench', version: '1.0.0' });
await client.connect(transport);
// Warm up, so JIT and the first-call paths are not in the figure.
for (let i = 0; i < warm; i++) {
  await client.callTool({ name: 'echo', arguments: toolArgs });
}
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) {
  const res = await client.callTool({ name: 'echo', arguments: toolArgs });
  if (res.isError) {
    console.error('echo failed', JSON.stringify(res));
    process.exit(1);
  }
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ calls: n, seconds, callsPerSec: n / seconds }));
await client.close();
process.exit(0);
