import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServersModel } from '../../../frontend/src/model';
import { NeedsYou, needsYouMessage, type WaitingServer } from '../src/needsYou';
import type { ServerStatus } from '../../../frontend/src/protocol.gen';

function st(name: string, state: ServerStatus['state']): ServerStatus {
	return { name, scope: 'project', type: 'local', state, toolCount: 0 };
}

test('needs you: a server that comes to await approval or a sign-in is told once, at load too', () => {
	const m = new ServersModel();
	const w = new NeedsYou();
	const told: WaitingServer[] = [];
	m.onDidChange(() => told.push(...w.update(m)));
	m.setServers([st('repo-tools', 'awaitingApproval'), st('fine', 'connected')]);
	m.updateServer(st('repo-tools', 'awaitingApproval')); // the same status again
	m.updateServer(st('linear', 'connecting'));
	m.updateServer(st('linear', 'needsAuth'));
	m.updateServer(st('linear', 'needsAuth'));
	assert.deepEqual(told, [
		{ name: 'repo-tools', state: 'awaitingApproval' },
		{ name: 'linear', state: 'needsAuth' },
	]);
});

test('needs you: told again only after it stopped waiting and came back to it', () => {
	const m = new ServersModel();
	const w = new NeedsYou();
	const told: string[] = [];
	m.onDidChange(() => told.push(...w.update(m).map((x) => `${x.name} ${x.state}`)));
	m.setServers([st('linear', 'needsAuth')]);
	m.updateServer(st('linear', 'connecting'));
	m.updateServer(st('linear', 'connected'));
	m.updateServer(st('linear', 'needsAuth')); // its token expired
	m.updateServer(st('repo-tools', 'awaitingApproval'));
	m.updateServer(st('repo-tools', 'needsAuth')); // approved, and it wants a sign-in
	assert.deepEqual(told, ['linear needsAuth', 'linear needsAuth', 'repo-tools awaitingApproval', 'repo-tools needsAuth']);
});

test('needs you: each kind says what to do, with the command that does it', () => {
	assert.deepEqual(needsYouMessage({ name: 'repo-tools', state: 'awaitingApproval' }), {
		text: 'This project ships the MCP server "repo-tools": it runs once you approve it.',
		button: 'Review…',
		command: 'freecode.server.approve',
	});
	assert.equal(needsYouMessage({ name: 'linear', state: 'needsAuth' }).command, 'freecode.server.signIn');
});
