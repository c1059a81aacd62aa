import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServersModel } from '../../../frontend/src/model';
import { NewServers } from '../src/newServers';
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
