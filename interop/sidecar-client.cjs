'use strict';
// A frontend of freecode-serve written as the VS Code extension's is: with
// vscode-jsonrpc over the sidecar's stdio. Driven by
// cmd/freecode-serve/interop_test.go; prints one JSON object saying what
// it saw, for the Go test to check, and exits non-zero on any failure.
//
// usage: node sidecar-client.cjs SIDECAR CONFIG PROJECT
// FREECODE_NPM points at the node_modules that hold vscode-jsonrpc. The
// config must hold examples/demo-server as "demo".
const { spawn } = require('node:child_process');
const path = require('node:path');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');

const npm = process.env.FREECODE_NPM;
if (!npm) {
  console.error('FREECODE_NPM is not set');
  process.exit(2);
}
const rpc = createRequire(path.join(npm, 'noop.js'))('vscode-jsonrpc/node');
const [sidecar, configPath, project] = process.argv.slice(2);

// A hang guard only: the Go test reports what was seen by then.
setTimeout(() => fail(new Error('no end within 60 s')), 60_000).unref();

const child = spawn(sidecar, ['--log-level', 'warn'], { stdio: ['pipe', 'pipe', 'inherit'] });
const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));

const seen = { statuses: [], toolsChanged: 0, progress: [], prompts: [] };
// waiters are resolved by the notification that satisfies them.
const waiters = [];
function when(pred) {
  return new Promise((resolve) => {
    waiters.push({ pred, resolve });
    check();
  });
}
function check() {
  for (let i = waiters.length - 1; i >= 0; i--) {
    if (waiters[i].pred()) {
      waiters[i].resolve();
      waiters.splice(i, 1);
    }
  }
}
conn.onNotification('freecode/servers/status', (st) => {
  seen.statuses.push({ name: st.name, state: st.state });
  check();
});
conn.onNotification('freecode/tools/changed', () => {
  seen.toolsChanged++;
  check();
});
conn.onNotification('freecode/tools/progress', (p) => {
  seen.progress.push(p);
  check();
});
conn.onRequest('freecode/permission/request', (req) => {
  seen.prompts.push({ callId: req.callId, tool: req.tool, server: req.server, arguments: req.arguments, readOnly: req.readOnly, projectTrusted: req.projectTrusted });
  return { decision: 'allowOnce' };
});
conn.listen();

function fail(err) {
  console.error('sidecar-client:', err && err.stack ? err.stack : err);
  console.error('seen so far:', JSON.stringify(seen));
  child.kill('SIGTERM');
  process.exit(1);
}

function text(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function main() {
  const init = await conn.sendRequest('initialize', {
    processId: process.pid,
    clientInfo: { name: 'vscode-jsonrpc-interop' },
    rootUri: null,
    capabilities: {},
    workspaceFolders: [{ uri: pathToFileURL(project).href, name: path.basename(project) }],
    initializationOptions: { configPath },
  });
  conn.sendNotification('initialized', {});
  await when(() => seen.statuses.some((s) => s.name === 'demo' && s.state === 'connected'));

  const { servers } = await conn.sendRequest('freecode/servers', {});
  const { tools } = await conn.sendRequest('freecode/tools', { server: 'demo' });
  const proj = await conn.sendRequest('freecode/project', {});

  // A destructive call: the sidecar asks this frontend, which allows it once.
  const del = await conn.sendRequest('freecode/tools/execute', {
    calls: [{ callId: 'n1', tool: 'mcp__demo__delete_file', arguments: { path: 'docs/notes.md' } }],
  });

  // A long call, cancelled through vscode-jsonrpc's CancellationToken
  // ($/cancelRequest) once its first progress has come.
  const source = new rpc.CancellationTokenSource();
  const slow = conn.sendRequest('freecode/tools/execute', {
    calls: [{ callId: 'n2', tool: 'mcp__demo__build', arguments: { steps: 60, seconds: 60 } }],
  }, source.token);
  await when(() => seen.progress.some((p) => p.callId === 'n2'));
  source.cancel();
  let cancelled = null;
  try {
    await slow;
  } catch (err) {
    cancelled = { code: err.code };
  }

  await conn.sendRequest('shutdown');
  conn.sendNotification('exit');
  const exit = await exited;
  conn.dispose();

  const firstProgress = seen.progress.find((p) => p.callId === 'n2');
  console.log(JSON.stringify({
    serverInfo: init.serverInfo.name,
    protocolVersion: init.capabilities.experimental.freecode.protocolVersion,
    servers: servers.map((s) => ({ name: s.name, state: s.state, toolCount: s.toolCount })),
    tools: tools.map((t) => t.id),
    projectRoot: proj.root,
    prompts: seen.prompts,
    deleted: { decision: del.results[0].decision, isError: del.results[0].isError, text: text(del.results[0]) },
    progress: { callId: firstProgress.callId, message: firstProgress.message },
    cancelled,
    toolsChanged: seen.toolsChanged > 0,
    exit,
  }));
}

main().catch(fail);
