// The servers model alone: how the sidecar's answers and notifications fold
// into what it holds per server, and the counts the status bar reads. What
// the tree makes of it is the extension's serversTree.test.ts's and
// extras.test.ts's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasTools, ServersModel, toolKind } from '../src/model';
import type { PromptInfo, ResourceInfo, ServerStatus, ToolInfo } from '../src/protocol.gen';

function st(name: string, over: Partial<ServerStatus> = {}): ServerStatus {
	return { name, scope: 'user', type: 'local', state: 'connected', toolCount: 0, ...over };
}

function tool(server: string | undefined, name: string): ToolInfo {
	return { id: server ? `mcp__${server}__${name}` : name, server, name, description: '', readOnly: true, inputSchema: {} };
}

const resource = (server: string, name: string): ResourceInfo => ({ server, uri: `x://${name}`, name });
const prompt = (server: string, name: string): PromptInfo => ({ server, name });

/** held is what the model holds, a line a server: state, then its tools, resources and prompts. */
function held(m: ServersModel): string[] {
	return m.servers().map((s) => {
		const parts = [`${s.name} ${s.state}`];
		const t = m.toolsOf(s.name).map((x) => x.name);
		if (t.length > 0) parts.push(`tools ${t.join(',')}`);
		const r = m.resourcesOf(s.name).map((x) => x.name);
		if (r.length > 0) parts.push(`resources ${r.join(',')}`);
		const p = m.promptsOf(s.name).map((x) => x.name);
		if (p.length > 0) parts.push(`prompts ${p.join(',')}`);
		return parts.join(' · ');
	});
}

type Step = (m: ServersModel) => void;
const cases: { name: string; steps: Step[]; want: string[] }[] = [
	{
		name: 'a status for a server not listed yet adds it (a config edit)',
		steps: [(m) => m.setServers([st('demo')]), (m) => m.updateServer(st('added', { state: 'connecting' }))],
		want: ['added connecting', 'demo connected'],
	},
	{
		name: 'a server missing from a new freecode/servers answer is gone, with its tools, resources and prompts',
		steps: [
			(m) => m.setServers([st('demo'), st('other')]),
			(m) => m.setTools([tool('demo', 'x'), tool('other', 'y')]),
			(m) => m.setResources('demo', [resource('demo', 'r')]),
			(m) => m.setPrompts('demo', [prompt('demo', 'p')]),
			(m) => m.setServers([st('other')]),
			(m) => m.updateServer(st('demo')),
		],
		want: ['demo connected', 'other connected · tools y'],
	},
	{
		name: 'a removed server leaves with all it had, whatever its state was',
		steps: [
			(m) => m.setServers([st('demo'), st('off', { state: 'stopped' }), st('p', { scope: 'project', state: 'awaitingApproval' })]),
			(m) => m.setTools([tool('demo', 'x')]),
			(m) => m.setResources('demo', [resource('demo', 'r')]),
			(m) => m.setPrompts('demo', [prompt('demo', 'p')]),
			(m) => m.updateServer(st('demo', { state: 'removed' })),
			(m) => m.updateServer(st('off', { state: 'removed' })),
			(m) => m.updateServer(st('p', { scope: 'project', state: 'removed' })),
			(m) => m.updateServer(st('demo', { state: 'connecting' })),
		],
		want: ['demo connecting'],
	},
	{
		name: "one server's tool list replaces only that server's tools; built-ins are not kept",
		steps: [
			(m) => m.setServers([st('a'), st('b')]),
			(m) => m.setTools([tool('a', 'z'), tool('a', 'y'), tool('b', 'x'), tool(undefined, 'read')]),
			(m) => m.setTools([tool('a', 'w'), tool('b', 'not-a-tool-of-a')], 'a'),
		],
		want: ['a connected · tools w', 'b connected · tools x'],
	},
	{
		name: 'tools and prompts are kept by name, resources as listed',
		steps: [
			(m) => m.setServers([st('s')]),
			(m) => m.setTools([tool('s', 'b'), tool('s', 'a')]),
			(m) => m.setResources('s', [resource('s', 'z'), resource('s', 'y')]),
			(m) => m.setPrompts('s', [prompt('s', 'q'), prompt('s', 'p')]),
		],
		want: ['s connected · tools a,b · resources z,y · prompts p,q'],
	},
	{
		name: 'clear forgets everything',
		steps: [(m) => m.setServers([st('s')]), (m) => m.setTools([tool('s', 'a')]), (m) => m.clear()],
		want: [],
	},
];

for (const tc of cases) {
	test(`model: ${tc.name}`, () => {
		const m = new ServersModel();
		let changes = 0;
		m.onDidChange(() => changes++);
		for (const step of tc.steps) step(m);
		assert.deepEqual(held(m), tc.want);
		assert.equal(changes, tc.steps.length, 'every step is one change');
	});
}

test('model: an empty resource or prompt list is the same as none', () => {
	const m = new ServersModel();
	m.setServers([st('s')]);
	m.setResources('s', [resource('s', 'r')]);
	m.setPrompts('s', [prompt('s', 'p')]);
	m.setResources('s', []);
	m.setPrompts('s', []);
	assert.deepEqual(held(m), ['s connected']);
});

test('model: every tool by server then name, and a tool by its id', () => {
	const m = new ServersModel();
	m.setServers([st('b'), st('a')]);
	m.setTools([tool('b', 'x'), tool('a', 'z'), tool('a', 'y')]);
	assert.deepEqual(
		m.allTools().map((t) => t.id),
		['mcp__a__y', 'mcp__a__z', 'mcp__b__x'],
	);
	assert.equal(m.tool('mcp__b__x')?.server, 'b');
	assert.equal(m.tool('mcp__c__x'), undefined);
	assert.equal(m.size, 2);
});

test('model: a listener that unregisters hears no more', () => {
	const m = new ServersModel();
	let heard = 0;
	const off = m.onDidChange(() => heard++);
	m.setServers([st('s')]);
	off();
	m.clear();
	assert.equal(heard, 1);
});

test('model: summary counts connected of enabled and names the failed', () => {
	const m = new ServersModel();
	m.setServers([
		st('a', { state: 'connected', toolCount: 2 }),
		st('b', { state: 'connected' }),
		st('c', { state: 'failed' }),
		st('d', { state: 'failed' }),
		st('e', { scope: 'project', state: 'awaitingApproval' }),
		st('f', { type: 'remote', state: 'needsAuth' }),
		st('g', { state: 'disabled' }),
		st('h', { state: 'connecting' }),
		st('i', { state: 'reconnecting', toolCount: 4 }),
		st('j', { state: 'stopped' }),
		st('k', { state: 'idle', toolCount: 13 }),
		st('l', { state: 'blocked', blocked: "blocked by your organization's policy: deniedMcpServers[0] in /etc/freecode/managed-settings.json" }),
		st('m', { state: 'failed', lastErrorKind: 'secret', missingSecrets: ['GITHUB_TOKEN'] }),
	]);
	assert.deepEqual(m.summary(), {
		total: 13,
		enabled: 11,
		connected: 2,
		failed: ['c', 'd', 'm'],
		awaitingApproval: ['e'],
		needsAuth: ['f'],
		needsSecret: ['m'],
		blocked: ['l'],
		busy: 2,
		idle: 1,
		problems: 0,
		configBroken: false,
		problemLines: [],
	});
});

test('model: config problems are counted across files, cleared per file, and forgotten with the sidecar', () => {
	const m = new ServersModel();
	let changes = 0;
	m.onDidChange(() => changes++);
	m.setProblems({ path: '/h/.freecode/config.json', problems: [{ message: 'unknown key "typ"', line: 4, column: 7, severity: 'error' }] });
	m.setProblems({ path: '/p/.freecode/settings.json', problems: [{ message: 'a', line: 1, severity: 'error' }, { message: 'b', line: 2, severity: 'error' }] });
	assert.equal(m.summary().problems, 3);
	assert.deepEqual(m.fileProblems().map((f) => f.path), ['/h/.freecode/config.json', '/p/.freecode/settings.json']);
	m.setProblems({ path: '/p/.freecode/settings.json', problems: [] });
	assert.equal(m.summary().problems, 1);
	m.clear();
	assert.equal(m.summary().problems, 0);
	assert.equal(changes, 4);
});

test('model: a server has its tools registered while connected, reconnecting or idle', () => {
	const states: ServerStatus['state'][] = [
		'connected',
		'connecting',
		'reconnecting',
		'failed',
		'awaitingApproval',
		'needsAuth',
		'disabled',
		'stopped',
		'removed',
		'idle',
	];
	assert.deepEqual(states.filter(hasTools), ['connected', 'reconnecting', 'idle']);
});

test('model: a tool is read-only only when it says so, destructive unless it says it is not', () => {
	const t = tool('s', 'x');
	assert.equal(toolKind({ ...t, readOnly: true }), 'read-only');
	assert.equal(toolKind({ ...t, readOnly: false, destructive: false }), 'writes');
	assert.equal(toolKind({ ...t, readOnly: false, destructive: true }), 'destructive');
	assert.equal(toolKind({ ...t, readOnly: false }), 'destructive');
});
