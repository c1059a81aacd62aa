// The extension's session logic against the real sidecar: freecode-serve
// spawned over stdio, spoken to through vscode-jsonrpc (what
// vscode-languageclient uses underneath), with the repository's demo MCP
// server configured. Permission prompts are answered through the same
// permissionPrompt/answerFor the modal uses, by the button a user would press.
//
// Needs FREECODE_BIN: the directory `make build` writes (freecode-serve and
// demo-server). `make vscode-integration` sets it; without it the test says
// it was skipped and why.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { ALLOW_ONCE, answerFor, DENY, permissionPrompt } from '../../../../frontend/src/permissionChoices';
import type { PermissionRequest, ServerStatus } from '../../../../frontend/src/protocol.gen';
import type { Session } from '../../../../frontend/src/session';
import { ServersModel } from '../../../../frontend/src/model';
import { toolNodes } from '../../src/views/serversTree';
import { serverNodes } from '../../src/views/tree';
import { startSidecar, until as waitFor, writeConfig, type Sidecar } from './harness';

const bin = process.env.FREECODE_BIN;
const skip = bin ? false : 'FREECODE_BIN is not set (make vscode-integration sets it to the built binaries)';

let tmp: string;
let configPath: string;
let workspace: string;
let sidecar: Sidecar;
let session: Session;
const model = new ServersModel();
const asked: PermissionRequest[] = [];
const buttons: string[] = [];
const warnings: string[] = [];

function servers(second: boolean): unknown[] {
	const list: unknown[] = [{ name: 'demo', type: 'local', command: [path.join(bin!, 'demo-server'), '--root', workspace] }];
	if (second) list.push({ name: 'second', type: 'local', command: [path.join(bin!, 'demo-server'), '--name', 'second'] });
	return list;
}

function until(what: string, ok: () => boolean): Promise<void> {
	return waitFor(model, what, ok, () => sidecar.stderr());
}

function connected(name: string, tools: number): boolean {
	const s = model.server(name);
	return s?.state === 'connected' && s.toolCount === tools && toolNodes(model, name).length === tools;
}

before(async () => {
	if (skip) return;
	tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'freecode-ext-integration-'));
	workspace = path.join(tmp, 'workspace');
	fs.mkdirSync(workspace);
	fs.writeFileSync(path.join(workspace, 'README.md'), '# integration\n');
	fs.writeFileSync(path.join(workspace, 'delete-me.txt'), 'x\n');
	configPath = path.join(tmp, 'home', '.freecode', 'config.json');
	writeConfig(configPath, servers(false));
	sidecar = await startSidecar({
		bin: bin!,
		tmp,
		workspace,
		configPath,
		model,
		hooks: {
			askPermission: async (req) => {
				asked.push(req);
				const prompt = permissionPrompt(req, 1200);
				const press = buttons.shift();
				const a = answerFor(prompt, press);
				return a === 'showFull' ? { decision: 'deny' } : a;
			},
			warn: (m) => warnings.push(m),
		},
	});
	session = sidecar.session;
});

after(async () => {
	if (skip) return;
	const pids = ['demo', 'second'].map((n) => model.server(n)?.pid).filter((p): p is number => p !== undefined);
	await sidecar.stop();
	for (const pid of pids) {
		assert.throws(() => process.kill(pid, 0), /ESRCH/, `MCP server pid ${pid} outlived shutdown`);
	}
	fs.rmSync(tmp, { recursive: true, force: true });
	assert.deepEqual(warnings, [], 'the sidecar sent something that does not fit the protocol');
});

test('the demo server connects and its tools reach the tree', { skip }, async () => {
	await until('demo connected with 7 tools', () => connected('demo', 7));
	const tools = toolNodes(model, 'demo').map((t) => `${t.label} ${t.description}`);
	assert.ok(tools.includes('delete_file destructive'), tools.join(', '));
	assert.ok(tools.includes('read_file read-only'), tools.join(', '));
});

test('freecode/project names the config file', { skip }, async () => {
	const p = await session.project();
	assert.equal(p.configPath, configPath);
	assert.equal(p.projectTrusted, false);
});

test('a read-only call runs without a prompt', { skip }, async () => {
	const before = asked.length;
	const r = await session.execute([{ callId: 'ro', tool: 'mcp__demo__read_file', arguments: { path: 'README.md' } }]);
	assert.equal(asked.length, before);
	assert.equal(r.results[0].decision, 'allowed');
	assert.equal(r.results[0].isError, false);
	assert.match(String(r.results[0].content[0]?.text), /# integration/);
});

test('a destructive call asks; Deny runs nothing', { skip }, async () => {
	buttons.push(DENY);
	const r = await session.execute([{ callId: 'd1', tool: 'mcp__demo__delete_file', arguments: { path: 'delete-me.txt' } }]);
	const req = asked.at(-1)!;
	assert.deepEqual(
		{ callId: req.callId, tool: req.tool, server: req.server, readOnly: req.readOnly, projectTrusted: req.projectTrusted, arguments: req.arguments },
		{ callId: 'd1', tool: 'mcp__demo__delete_file', server: 'demo', readOnly: false, projectTrusted: false, arguments: { path: 'delete-me.txt' } },
	);
	assert.equal(r.results[0].decision, 'denied');
	assert.equal(r.results[0].isError, true);
	assert.ok(fs.existsSync(path.join(workspace, 'delete-me.txt')));
});

test('Allow Once runs it', { skip }, async () => {
	buttons.push(ALLOW_ONCE);
	const r = await session.execute([{ callId: 'd2', tool: 'mcp__demo__delete_file', arguments: { path: 'delete-me.txt' } }]);
	assert.equal(r.results[0].decision, 'asked');
	assert.equal(r.results[0].isError, false);
	assert.ok(!fs.existsSync(path.join(workspace, 'delete-me.txt')));
});

test('definitions come with a hash', { skip }, async () => {
	const d = await session.definitions('anthropic');
	assert.ok(d.hash.length > 0);
	assert.ok(
		d.tools.some((t) => (t as { name?: string }).name === 'mcp__demo__delete_file'),
		'the demo tools are in the provider array',
	);
});

test('a config edit adds a server to the tree, from notifications alone', { skip }, async () => {
	writeConfig(configPath, servers(true));
	await until('second connected with 7 tools', () => connected('second', 7));
	assert.ok(connected('demo', 7), 'the demo server stays connected');
});

test('stop and start a server', { skip }, async () => {
	const stopped: ServerStatus = await session.stop('second');
	assert.equal(stopped.state, 'stopped');
	const started = await session.start('second');
	assert.equal(started.state, 'connected');
	await until('second connected again', () => connected('second', 7));
});

test('a stopped server removed from the config leaves the tree, from notifications alone', { skip }, async () => {
	// Stopped, it has no tools whose change would make the tree read the
	// servers again: only its removed status can take it out.
	assert.equal((await session.stop('second')).state, 'stopped');
	await until('second stopped', () => model.server('second')?.state === 'stopped');
	writeConfig(configPath, servers(false));
	await until('second gone', () => model.server('second') === undefined);
	assert.deepEqual(
		serverNodes(model).map((n) => n.name),
		['demo'],
	);
});
