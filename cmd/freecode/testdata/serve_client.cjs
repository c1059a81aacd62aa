// serve_client.cjs: the official TypeScript SDK's client driving
// `freecode mcp serve`, for the interop tests. It lists the tools, makes the
// calls it is given in order, answers permission forms as told, and prints
// one JSON object:
//
//   {"protocolVersion": "...", "tools": [{name, annotations, hasOutputSchema}],
//    "results": [{isError, decision, text}], "asked": [message, ...]}
//
// Usage: FREECODE_NPM=… node serve_client.cjs --answer allowOnce|deny|none
//          --calls '[{"name":…,"arguments":{…}}]'
//          (--url URL [--token T] | -- <command> [args…])
//
// --answer none declares no elicitation capability, so the server cannot
// ask; the others declare it and answer every form with that choice.
const path = require("node:path");
const npm = process.env.FREECODE_NPM;
if (!npm) {
  console.error("FREECODE_NPM is not set");
  process.exit(2);
}
const req = require("node:module").createRequire(path.join(npm, "..", "package.json"));
const { Client } = req("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = req("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = req("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = req("@modelcontextprotocol/sdk/types.js");

const argv = process.argv.slice(2);
let answer = "none";
let calls = [];
let url;
let token;
while (argv.length && argv[0] !== "--") {
  const flag = argv.shift();
  const value = argv.shift();
  switch (flag) {
    case "--answer": answer = value; break;
    case "--calls": calls = JSON.parse(value); break;
    case "--url": url = value; break;
    case "--token": token = value; break;
    default:
      console.error(`unknown flag ${flag}`);
      process.exit(2);
  }
}
argv.shift();

(async () => {
  const capabilities = answer === "none" ? {} : { elicitation: { form: {} } };
  const client = new Client({ name: "serve-client", version: "1.0.0" }, { capabilities });
  const asked = [];
  if (answer !== "none") {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { decision: answer } };
    });
  }
  let transport;
  if (url) {
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  } else {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, FREECODE_CONFIG: process.env.FREECODE_CONFIG };
    transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), env, stderr: "inherit" });
  }
  await client.connect(transport);
  const out = { protocolVersion: transport.protocolVersion, tools: [], results: [], asked };
  let cursor;
  do {
    const res = await client.listTools(cursor ? { cursor } : {});
    for (const t of res.tools) {
      out.tools.push({ name: t.name, annotations: t.annotations, hasOutputSchema: !!t.outputSchema });
    }
    cursor = res.nextCursor;
  } while (cursor);
  for (const c of calls) {
    const res = await client.callTool({ name: c.name, arguments: c.arguments });
    const text = (res.content || []).filter((x) => x.type === "text").map((x) => x.text).join("\n");
    out.results.push({ isError: !!res.isError, decision: res._meta && res._meta["freecode/decision"], text });
  }
  console.log(JSON.stringify(out));
  await client.close();
  process.exit(0);
})().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
