import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServersModel } from '../../../frontend/src/model';
import { NewServers, failedNotice, stillFailing } from '../src/newServers';
import type { ServerStatus } from '../../../frontend/src/protocol.gen';

function st(name: string, state: ServerStatus['state']): ServerStatus {
	return { name, scope: 'user', type: 'local', state, toolCount: 0, lastError: state === 'failed' ? 'exited with code 3' : undefined };
}

test('new servers: one added that fails is told once; the ones there at the start are not', () => {
	const m = new ServersModel();
	const w = new NewServers();
	const told: string[] = [];
	m.onDidChange(() => told.push(...w.update(m)));
	m.setServers([st('old', 'connecting')]);
	m.updateServer(st('old', 'failed'));
	m.updateServer(st('added', 'connecting'));
	m.updateServer(st('added', 'failed'));
	m.updateServer(st('added', 'connecting')); // its retry
	m.updateServer(st('added', 'failed'));
	assert.deepEqual(told, ['added']);
});

test('new servers: one that connected is no longer new; removed and added again, it is', () => {
	const m = new ServersModel();
	const w = new NewServers();
	const told: string[] = [];
	m.onDidChange(() => told.push(...w.update(m)));
	m.setServers([]);
	m.updateServer(st('a', 'connected'));
	m.updateServer(st('a', 'failed'));
	assert.deepEqual(told, []);
	m.updateServer(st('a', 'removed'));
	m.updateServer(st('a', 'failed'));
	assert.deepEqual(told, ['a']);
});

test('new servers: a sidecar restart takes a new baseline', () => {
	const m = new ServersModel();
	const w = new NewServers();
	const told: string[] = [];
	m.onDidChange(() => told.push(...w.update(m)));
	m.setServers([]);
	m.clear();
	m.setServers([st('a', 'connecting')]);
	m.updateServer(st('a', 'failed'));
	assert.deepEqual(told, []);
});

test('new servers: one that failed is told with its whole reason and its log; several in one notice', () => {
	const m = new ServersModel();
	m.setServers([
		{ ...st('a', 'failed'), lastError: 'exited with code 3: error: GITHUB_TOKEN is not set' },
		st('b', 'failed'),
		{ name: 'c', scope: 'user', type: 'local', state: 'blocked', toolCount: 0, blocked: "blocked by your organization's policy: deniedMcpServers[0] in /etc/freecode/managed-settings.json" },
		st('d', 'failed'),
		st('e', 'failed'),
	]);
	assert.deepEqual(failedNotice(m, ['a']), {
		text: 'The MCP server a, just added, failed: exited with code 3: error: GITHUB_TOKEN is not set',
		buttons: ['Show Log', 'Show Configuration'],
		server: 'a',
	});
	assert.deepEqual(failedNotice(m, ['c']), {
		text: "The MCP server c, just added, does not run: blocked by your organization's policy: deniedMcpServers[0] in /etc/freecode/managed-settings.json",
		buttons: ['Show Configuration'],
		server: 'c',
	});
	const many = failedNotice(m, ['a', 'b', 'c', 'd', 'e']);
	assert.equal(many.server, undefined);
	assert.deepEqual(many.buttons, ['Show Servers']);
	assert.match(many.text, /^5 MCP servers just added did not start: a \(exited with code 3: error: GITHUB_TOKEN is not set\); b \(exited with code 3\); c \(blocked by your organization's policy: deniedMcpServers\[0\] …\) and 2 more$/);
});

test('new servers: one the organization blocks is told, as it will never connect', () => {
	const m = new ServersModel();
	const w = new NewServers();
	const told: string[] = [];
	m.onDidChange(() => told.push(...w.update(m)));
	m.setServers([]);
	m.updateServer({ name: 'x', scope: 'user', type: 'local', state: 'blocked', toolCount: 0, blocked: 'blocked by your organization’s policy' });
	assert.deepEqual(told, ['x']);
});

test('new servers: one that misses a secret is told which, with Set Secret… (no CLI command) rather than its log, which holds nothing', () => {
	const m = new ServersModel();
	const secret: ServerStatus = {
		name: 'github',
		scope: 'user',
		type: 'local',
		state: 'failed',
		toolCount: 0,
		lastError: 'secret GITHUB_TOKEN is not set (`freecode secret set GITHUB_TOKEN`)',
		lastErrorKind: 'secret',
		missingSecrets: ['GITHUB_TOKEN'],
	};
	m.setServers([secret, st('b', 'failed')]);
	assert.deepEqual(failedNotice(m, ['github']), {
		text: 'The MCP server github, just added, needs the secret GITHUB_TOKEN.',
		buttons: ['Set Secret…'],
		server: 'github',
	});
	// Among several, Set Secret… opens its picker of the servers that miss one.
	const many = failedNotice(m, ['github', 'b']);
	assert.deepEqual([many.buttons, many.server], [['Set Secret…', 'Show Servers'], undefined]);
	assert.ok(many.text.includes('github (needs the secret GITHUB_TOKEN)'), many.text);
	assert.ok(!many.text.includes('freecode secret set'), many.text);
	assert.deepEqual(failedNotice(m, ['b']).buttons, ['Show Log', 'Show Configuration']);
});

test('new servers: one fixed before its notice is made (Set Secret… at once) is not told as failed', () => {
	const m = new ServersModel();
	m.setServers([st('vs-notes', 'failed'), st('vs-files', 'failed'), st('gone', 'failed')]);
	m.updateServer(st('vs-notes', 'connecting'));
	m.updateServer(st('gone', 'removed'));
	assert.deepEqual(stillFailing(m, ['vs-notes', 'vs-files', 'gone']), ['vs-files']);
	m.updateServer({ ...st('vs-files', 'blocked'), blocked: 'blocked by policy' });
	assert.deepEqual(stillFailing(m, ['vs-files']), ['vs-files']);
});
