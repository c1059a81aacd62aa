// capture.mjs lists the tools of a real npm MCP server over stdio with the
// TypeScript SDK and prints the tools/list result as JSON. It is run by hand
// (see README) to refresh the committed testdata; tests never run it.
//
//   FREECODE_NPM=/work/main/interop/node_modules node capture.mjs server-filesystem /tmp > server-filesystem.tools.json
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const npm = process.env.FREECODE_NPM;
if (!npm) throw new Error('FREECODE_NPM is not set');
const [pkg, ...serverArgs] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(path.join(npm, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(npm, '@modelcontextprotocol', pkg, 'dist/index.js'), ...serverArgs],
  env: { PATH: process.env.PATH, MEMORY_FILE_PATH: '/tmp/freecode-capture-memory.jsonl' },
  stderr: 'ignore',
});
const client = new Client({ name: 'freecode-capture', version: '0' });
await client.connect(transport);
const tools = [];
let cursor;
for (let i = 0; i < 100; i++) {
  const res = await client.listTools(cursor ? { cursor } : {});
  tools.push(...res.tools);
  cursor = res.nextCursor;
  if (!cursor) break;
}
await client.close();
process.stdout.write(JSON.stringify({ tools }, null, 2) + '\n');
