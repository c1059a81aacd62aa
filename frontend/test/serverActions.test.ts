// Which server actions apply to which server, as both frontends offer them
// (the extension's menus are checked against canDo in its own test).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerStateValues, type ServerStatus } from '../src/protocol.gen';
import { actionWords, canDo, serverPicks } from '../src/serverActions';

const st = (name: string, over: Partial<ServerStatus> = {}): ServerStatus => ({ name, scope: 'user', type: 'local', state: 'connected', toolCount: 0, ...over });

test('server actions: Set Secret… only for a server failed for the want of a secret it names', () => {
	const needs = st('github', { state: 'failed', lastErrorKind: 'secret', lastError: 'secret GITHUB_TOKEN is not set', missingSecrets: ['GITHUB_TOKEN'] });
	assert.equal(canDo('setSecret', needs), true);
	assert.equal(canDo('setSecret', { ...needs, scope: 'project' }), true);
	assert.equal(canDo('setSecret', { ...needs, scope: 'managed', type: 'remote' }), true);
	assert.equal(canDo('setSecret', { ...needs, lastErrorKind: 'exited' }), false);
	assert.equal(canDo('setSecret', { ...needs, missingSecrets: [] }), false);
	assert.equal(canDo('setSecret', { ...needs, missingSecrets: undefined }), false);
	// Started again and connecting: nothing to set until it fails again.
	for (const state of ServerStateValues.filter((s) => s !== 'failed')) assert.equal(canDo('setSecret', { ...needs, state }), false, state);
	// It fails at once, so Start and Restart stay offered, and its log.
	assert.deepEqual(
		(['start', 'restart', 'showLog'] as const).map((a) => canDo(a, needs)),
		[true, true, true],
	);
	assert.equal(actionWords.setSecret.title, 'Set Secret…');
});

test('server actions: the picker says what a server misses rather than its error', () => {
	const servers = [
		st('a'),
		st('github', { state: 'failed', lastErrorKind: 'secret', lastError: 'secret GITHUB_TOKEN is not set (`freecode secret set GITHUB_TOKEN`)', missingSecrets: ['GITHUB_TOKEN'] }),
		st('b', { state: 'failed', lastErrorKind: 'exited', lastError: 'exited with code 3' }),
	];
	assert.deepEqual(serverPicks(servers, 'setSecret'), [{ label: 'github', description: 'needs secret GITHUB_TOKEN', name: 'github' }]);
	assert.deepEqual(serverPicks(servers, 'restart').map((p) => p.description), ['connected', 'needs secret GITHUB_TOKEN', 'failed: exited with code 3']);
});
