// Sequential tools/call round trips over stdio with the TypeScript SDK
// client, each one timed, for bench/call_test.go. Prints one JSON line:
// {"latenciesUs":[…]}, in call order.
//
// usage: node ts-stdio-latency.mjs WARMUP N TOOL '<arguments JSON>' command [args...]
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

const [warmArg, nArg, tool, argsJSON, command, ...args] = process.argv.slice(2);
const warm = Number(warmArg);
const n = Number(nArg);
const toolArgs = JSON.parse(argsJSON);

const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'ignore' });
const client = new Client({ name: 'ts-bench', version: '1.0.0' });
await client.connect(transport);
const call = async () => {
  const res = await client.callTool({ name: tool, arguments: toolArgs });
  if (res.isError) {
    console.error(tool, 'failed', JSON.stringify(res));
    process.exit(1);
  }
};
// Warm up, so JIT and the first-call paths are not in the figure.
for (let i = 0; i < warm; i++) {
  await call();
}
const latenciesUs = new Array(n);
for (let i = 0; i < n; i++) {
  const start = process.hrtime.bigint();
  await call();
  latenciesUs[i] = Number(process.hrtime.bigint() - start) / 1e3;
}
console.log(JSON.stringify({ latenciesUs }));
await client.close();
process.exit(0);
