import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServersModel } from '../src/model';
import type { ServerStatus } from '../src/protocol.gen';
import { statusText, type SidecarState } from '../src/statusText';

function summary(states: ServerStatus['state'][]) {
	const m = new ServersModel();
	m.setServers(states.map((state, i) => ({ name: `s${i}`, scope: 'user', type: 'local', state, toolCount: 0 })));
	return m.summary();
}

const cases: { name: string; sidecar: SidecarState; states: ServerStatus['state'][]; want: ReturnType<typeof statusText> }[] = [
	{
		name: 'all connected',
		sidecar: 'running',
		states: ['connected', 'connected'],
		want: { text: '$(plug) MCP 2/2', tooltip: 'FreeCode: 2 of 2 enabled MCP servers connected', background: undefined },
	},
	{
		name: 'a disabled server is not counted as enabled',
		sidecar: 'running',
		states: ['connected', 'disabled'],
		want: { text: '$(plug) MCP 1/1', tooltip: 'FreeCode: 1 of 1 enabled MCP servers connected', background: undefined },
	},
	{
		name: 'one failed: warning colour, named',
		sidecar: 'running',
		states: ['connected', 'failed', 'awaitingApproval'],
		want: {
			text: '$(warning) MCP 1/3',
			tooltip: 'FreeCode: 1 of 3 enabled MCP servers connected\nfailed: s1\nawaiting approval: s2',
			background: 'statusBarItem.warningBackground',
		},
	},
	{
		name: 'idle servers (started on demand) are ready, and said to be idle',
		sidecar: 'running',
		states: ['connected', 'idle', 'idle'],
		want: {
			text: '$(plug) MCP 3/3',
			tooltip: 'FreeCode: 1 of 3 enabled MCP servers connected\n2 idle: started on demand, at their first call',
			background: undefined,
		},
	},
	{
		name: 'still connecting',
		sidecar: 'running',
		states: ['connected', 'connecting'],
		want: { text: '$(sync~spin) MCP 1/2', tooltip: 'FreeCode: 1 of 2 enabled MCP servers connected\n1 connecting', background: undefined },
	},
	{
		name: 'no server',
		sidecar: 'running',
		states: [],
		want: { text: '$(plug) MCP', tooltip: 'FreeCode: no MCP server configured. Click for actions.' },
	},
	{
		name: 'sidecar missing',
		sidecar: 'missing',
		states: [],
		want: {
			text: '$(error) MCP',
			tooltip: 'FreeCode: the sidecar (freecode-serve) was not found. Click to see why.',
			background: 'statusBarItem.errorBackground',
		},
	},
	{
		name: 'sidecar gave up after crashes',
		sidecar: 'failed',
		states: [],
		want: {
			text: '$(error) MCP',
			tooltip: 'FreeCode: the sidecar stopped and was not restarted. Click to see why.',
			background: 'statusBarItem.errorBackground',
		},
	},
];

for (const tc of cases) {
	test(`status: ${tc.name}`, () => {
		assert.deepEqual(statusText(tc.sidecar, summary(tc.states)), tc.want);
	});
}

test('status: a config with problems is a warning, with or without servers', () => {
	const m = new ServersModel();
	m.setServers([
		{ name: 'a', scope: 'user', type: 'local', state: 'connected', toolCount: 1 },
		{ name: 'b', scope: 'user', type: 'local', state: 'connected', toolCount: 1 },
	]);
	m.setProblems({ path: '/h/.freecode/config.json', problems: [{ message: 'unknown key "typ"', line: 4, column: 7, severity: 'error' }] });
	assert.deepEqual(statusText('running', m.summary()), {
		text: '$(warning) MCP 2/2',
		tooltip: 'FreeCode: 2 of 2 enabled MCP servers connected\nThe config has 1 problem; showing the last good one',
		background: 'statusBarItem.warningBackground',
	});
	const empty = new ServersModel();
	empty.setProblems({ path: '/h/.freecode/config.json', problems: [{ message: 'a', severity: 'error' }, { message: 'b', severity: 'error' }] });
	assert.deepEqual(statusText('running', empty.summary()), {
		text: '$(warning) MCP',
		tooltip: 'FreeCode: no MCP server loaded\nThe config has 2 problems; fix it to load its servers\nClick for actions.',
		background: 'statusBarItem.warningBackground',
	});
});

test('status: warnings alone leave the colour as it is, and are in the tooltip', () => {
	const m = new ServersModel();
	m.setServers([{ name: 'a', scope: 'user', type: 'local', state: 'connected', toolCount: 1 }]);
	m.setProblems({ path: '/c.json', problems: [{ message: 'unknown key', severity: 'warning' }], summary: 'the config has 1 warning' });
	assert.deepEqual(statusText('running', m.summary()), {
		text: '$(plug) MCP 1/1',
		tooltip: 'FreeCode: 1 of 1 enabled MCP servers connected\nThe config has 1 warning',
		background: undefined,
	});
});

test('status: a server missing a secret is failed, and its tooltip says a secret is needed', () => {
	const m = new ServersModel();
	m.setServers([
		{ name: 'a', scope: 'user', type: 'local', state: 'connected', toolCount: 1 },
		{ name: 'github', scope: 'user', type: 'local', state: 'failed', toolCount: 0, lastErrorKind: 'secret', missingSecrets: ['GITHUB_TOKEN'] },
	]);
	assert.deepEqual(statusText('running', m.summary()), {
		text: '$(warning) MCP 1/2',
		tooltip: 'FreeCode: 1 of 2 enabled MCP servers connected\nfailed: github\nsecret needed: github',
		background: 'statusBarItem.warningBackground',
	});
});
