import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ServersModel } from '../../../frontend/src/model';
import type { ServerStatus, ToolInfo } from '../../../frontend/src/protocol.gen';
import { serverNode, toolNode, toolNodes } from '../src/views/serversTree';
import { serverNodes } from '../src/views/tree';

const fixtures = join(__dirname, '..', '..', '..', '..', 'frontend', 'test', 'fixtures');
const statuses: ServerStatus[] = JSON.parse(readFileSync(join(fixtures, 'ServerStatus.json'), 'utf8'));
const tools: ToolInfo[] = JSON.parse(readFileSync(join(fixtures, 'ToolInfo.json'), 'utf8'));

const base: ServerStatus = { name: 'demo', scope: 'user', type: 'local', state: 'connecting', toolCount: 0 };

function st(over: Partial<ServerStatus>): ServerStatus {
	return { ...base, ...over };
}

/** view is what the tree shows, as lines: what a person reads, icons included. */
function view(m: ServersModel): string[] {
	const out: string[] = [];
	for (const s of serverNodes(m)) {
		// The can: words are serverActions.test.ts's.
		const words = s.contextValue.split(' ').filter((w) => !w.startsWith('can:'));
		out.push(`${s.icon.id} ${s.label} — ${s.description} [${words.join(' ')}]`);
		for (const t of toolNodes(m, s.name)) out.push(`  ${t.icon.id} ${t.label} — ${t.description}`);
	}
	return out;
}

const demoTools: ToolInfo[] = [
	{ id: 'mcp__demo__read_file', server: 'demo', name: 'read_file', description: 'Read a file.', readOnly: true, inputSchema: {} },
	{ id: 'mcp__demo__delete_file', server: 'demo', name: 'delete_file', description: 'Delete a file.', readOnly: false, destructive: true, inputSchema: {} },
	{ id: 'mcp__demo__create_issue', server: 'demo', name: 'create_issue', description: 'File an issue.', readOnly: false, destructive: false, inputSchema: {} },
];

type Step = (m: ServersModel) => void;
const cases: { name: string; steps: Step[]; want: string[] }[] = [
	{
		name: 'connecting, then connected with its tools',
		steps: [
			(m) => m.setServers([st({})]),
			(m) => m.updateServer(st({ state: 'connected', toolCount: 3 })),
			(m) => m.setTools(demoTools),
		],
		want: [
			'pass-filled demo — connected · 3 tools [server state:connected scope:user]',
			'  edit create_issue — writes',
			'  warning delete_file — destructive',
			'  eye read_file — read-only',
		],
	},
	{
		name: 'a crash: reconnecting keeps the tools, then failed shows the error',
		steps: [
			(m) => m.setServers([st({ state: 'connected', toolCount: 3 })]),
			(m) => m.setTools(demoTools),
			(m) => m.updateServer(st({ state: 'reconnecting', toolCount: 3 })),
		],
		want: [
			'sync~spin demo — reconnecting… · 3 tools [server state:reconnecting scope:user]',
			'  edit create_issue — writes',
			'  warning delete_file — destructive',
			'  eye read_file — read-only',
		],
	},
	{
		name: 'failed with the first line of its error',
		steps: [
			(m) => m.setServers([st({})]),
			(m) => m.updateServer(st({ state: 'failed', lastError: 'exit status 1\nTraceback (most recent call last):' })),
		],
		want: ['error demo — failed: exit status 1 Traceback (most recent call last): [server state:failed scope:user]'],
	},
	{
		name: 'a project server awaiting approval, then approved and connected',
		steps: [
			(m) => m.setServers([st({ name: 'repo', scope: 'project', state: 'awaitingApproval' })]),
			(m) => m.updateServer(st({ name: 'repo', scope: 'project', state: 'connected', toolCount: 1 })),
		],
		want: ['pass-filled repo — connected · 1 tool · project [server state:connected scope:project approved]'],
	},
	{
		name: 'disabled, stopped and needsAuth, sorted by name',
		steps: [
			(m) =>
				m.setServers([
					st({ name: 'zeta', state: 'disabled' }),
					st({ name: 'alpha', state: 'stopped' }),
					st({ name: 'gh', type: 'remote', state: 'needsAuth' }),
				]),
		],
		want: [
			'debug-stop alpha — stopped [server state:stopped scope:user]',
			'key gh — sign-in needed [server state:needsAuth scope:user remote]',
			'circle-slash zeta — disabled [server state:disabled scope:user]',
		],
	},
	{
		name: 'idle (started on demand) with its tools from its manifest',
		steps: [
			(m) => m.setServers([st({ state: 'idle', toolCount: 3 })]),
			(m) => m.setTools(demoTools),
		],
		want: [
			'circle-large-outline demo — idle · 3 tools [server state:idle scope:user]',
			'  edit create_issue — writes',
			'  warning delete_file — destructive',
			'  eye read_file — read-only',
		],
	},
	{
		name: 'tools whose definitions await review are marked, and counted on their server',
		steps: [
			(m) => m.setServers([st({ state: 'connected', toolCount: 3 })]),
			(m) =>
				m.setTools([
					{ ...demoTools[0], definitionChanged: true },
					demoTools[1],
					{ ...demoTools[2], new: true },
				]),
		],
		want: [
			'pass-filled demo — connected · 3 tools · 2 to review [server state:connected scope:user]',
			'  diff create_issue — writes · new',
			'  warning delete_file — destructive',
			'  diff read_file — read-only · definition changed',
		],
	},
];

for (const tc of cases) {
	test(`tree: ${tc.name}`, () => {
		const m = new ServersModel();
		let changes = 0;
		m.onDidChange(() => changes++);
		for (const step of tc.steps) step(m);
		assert.deepEqual(view(m), tc.want);
		assert.equal(changes, tc.steps.length, 'every step redraws once');
	});
}

test('tree: every fixture status makes a node with an icon and its state in the context value', () => {
	for (const s of statuses) {
		const n = serverNode(s, []);
		assert.ok(n.icon.id, s.name);
		assert.match(n.contextValue, new RegExp(`\\bstate:${s.state}\\b`));
		assert.ok(n.tooltip.startsWith(s.name), n.tooltip);
		// What a server runs or reaches is on its node, whatever its state.
		if (s.command) assert.ok(n.tooltip.includes(`command: ${s.command[0]}`), n.tooltip);
		if (s.url) assert.ok(n.tooltip.includes(`url: ${s.url}`), n.tooltip);
		if (s.toolListCut) assert.ok(n.tooltip.includes(s.toolListCut), n.tooltip);
	}
});

test('tree: control characters from a server are escaped, not shown', () => {
	const n = serverNode(st({ name: 'demo', state: 'failed', lastError: 'bad\u001b[2Jthing\r\u202eevil' }), []);
	assert.equal(n.description, 'failed: bad\\x1b[2Jthing \\u202eevil');
	assert.ok(!/[\u001b\r\u202e]/.test(n.tooltip));
	const t = toolNode({ ...tools[1], description: 'Deletes.\u0007' });
	assert.ok(t.tooltip.includes('Deletes.\\x07'), t.tooltip);
});

test('tree: the tooltip of a failed server has its command, error and stderr tail', () => {
	const n = serverNode(
		st({
			name: 'fs',
			transport: 'stdio',
			state: 'failed',
			command: ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/home/me/My Files', "it's", ''],
			lastError: 'starting fs: exec: "npx": executable file not found in $PATH',
			stderrTail: ['line one', 'line two'],
		}),
		[],
	);
	assert.equal(
		n.tooltip,
		[
			'fs — failed',
			'local (stdio), from your config',
			"command: npx -y @modelcontextprotocol/server-filesystem '/home/me/My Files' 'it'\\''s' ''",
			'last error: starting fs: exec: "npx": executable file not found in $PATH',
			'stderr:',
			'  line one',
			'  line two',
		].join('\n'),
	);
});

test('tree: a project server awaiting approval shows what it would run', () => {
	const n = serverNode(st({ name: 'repo-tools', scope: 'project', state: 'awaitingApproval', command: ['./scripts/mcp.sh', '${env:HOME}/src'] }), []);
	assert.equal(n.description, 'awaiting approval · project');
	assert.equal(
		n.tooltip,
		[
			'repo-tools — awaiting approval',
			"local (stdio), from this project's settings",
			'command: ./scripts/mcp.sh ${env:HOME}/src',
			'This project ships this server; it runs once you approve it.',
		].join('\n'),
	);
});

test('tree: a remote server shows its URL, and a cut tool list says so', () => {
	const n = serverNode(
		st({
			name: 'huge',
			type: 'remote',
			transport: 'http',
			state: 'connected',
			toolCount: 1000,
			url: 'https://tools.example.com/mcp?key=***',
			toolListCut: 'the tool list was cut at 1000 tools after 10 pages',
		}),
		[],
	);
	assert.equal(n.description, 'connected · 1000 tools (list cut)');
	assert.equal(
		n.tooltip,
		[
			'huge — connected',
			'remote (http), from your config',
			'url: https://tools.example.com/mcp?key=***',
			'tools: 1000',
			'tool list cut: the tool list was cut at 1000 tools after 10 pages',
		].join('\n'),
	);
});

test('tree: a tool under review carries its mark for the menus, and says why in its tooltip', () => {
	const changed = toolNode({ ...tools[0], definitionChanged: true });
	assert.equal(changed.contextValue, 'tool read-only review:changed');
	assert.equal(changed.name, tools[0].name);
	assert.ok(changed.tooltip.includes('every call asks until you accept the change'), changed.tooltip);
	const fresh = toolNode({ ...tools[1], new: true });
	assert.equal(fresh.contextValue, 'tool destructive review:new');
	assert.ok(fresh.tooltip.includes('not treated as read-only until you accept it'), fresh.tooltip);
	assert.equal(toolNode(tools[0]).contextValue, 'tool read-only');
});

test('tree: a tool a rule allows always says so, and which rule in which file', () => {
	const allowed = toolNode(tools[1]);
	assert.deepEqual(tools[1].allowedBy, { rule: 'mcp__demo__delete_file', source: 'local', path: '/home/me/project/.freecode/settings.local.json' });
	assert.equal(allowed.description, 'destructive · always allowed');
	assert.ok(
		allowed.tooltip.endsWith(
			'Always allowed: the allow rule "mcp__demo__delete_file" in /home/me/project/.freecode/settings.local.json lets every call of it run without asking, a model\'s or an MCP App\'s.',
		),
		allowed.tooltip,
	);
	const session = toolNode({ ...tools[1], allowedBy: { rule: 'mcp__demo', source: 'session' } });
	assert.equal(session.description, 'destructive · allowed this session');
	assert.ok(session.tooltip.includes('the allow rule "mcp__demo" for this session'), session.tooltip);
	assert.equal(toolNode({ ...tools[1], allowedBy: undefined }).description, 'destructive');
	// A definition under review asks anyway: the row says that, the tooltip both.
	const changed = toolNode({ ...tools[1], definitionChanged: true });
	assert.equal(changed.description, 'destructive · definition changed');
	assert.ok(changed.tooltip.includes('Always allowed: the allow rule'), changed.tooltip);
	// The rule and its file are the user's, but printable all the same.
	const odd = toolNode({ ...tools[1], allowedBy: { rule: 'mcp__x\u001b[2J', source: 'user', path: '/home/me/.freecode/settings.json' } });
	assert.ok(!/\u001b/.test(odd.tooltip), odd.tooltip);
});

test('tree: the tooltip of an idle server says how it starts', () => {
	const n = serverNode(st({ state: 'idle', toolCount: 13 }), []);
	assert.ok(n.tooltip.includes('tools: 13\n'), n.tooltip);
	assert.ok(n.tooltip.endsWith('Started on demand: the first call of one of its tools starts it.'), n.tooltip);
});

test("tree: a sandboxed server's row says so, and what its start waits on", () => {
	const line = "sandboxed: system read-only; writes /p, a private /tmp; cannot read ~/.ssh; no network";
	const running = serverNode(st({ name: 'fs', state: 'connected', toolCount: 2, sandbox: line }), []);
	assert.equal(running.description, 'connected · sandboxed, no network · 2 tools');
	assert.ok(running.tooltip.includes(line), running.tooltip);
	const allowList = serverNode(st({ name: 'fs', state: 'connected', toolCount: 2, sandbox: 'sandboxed: system read-only; network only to registry.npmjs.org' }), []);
	assert.equal(allowList.description, 'connected · sandboxed · 2 tools');
	const pending = serverNode(st({ name: 'repo', scope: 'project', state: 'awaitingApproval', approval: { entryHash: 'h', sandbox: line } }), []);
	assert.equal(pending.description, 'awaiting approval · sandboxed, no network · project');
	assert.equal(serverNode(st({ name: 'mine', state: 'connected', toolCount: 1 }), []).description, 'connected · 1 tool');
	const waiting = serverNode(
		st({ name: 'fs', state: 'connecting', sandbox: line, lastError: 'sandboxed: no network; npx is waiting for registry.npmjs.org, which the sandbox does not reach' }),
		[],
	);
	assert.ok(waiting.description.startsWith('connecting… sandboxed: no network; npx is waiting for registry.npmjs.org'), waiting.description);
});
