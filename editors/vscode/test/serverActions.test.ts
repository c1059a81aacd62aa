import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { entryPosition } from '../src/configEntry';
import { ServerStateValues, type ServerStatus } from '../../../frontend/src/protocol.gen';
import { actionWords, canDo, serverPicks, type ServerAction } from '../../../frontend/src/serverActions';
import { serverNode } from '../src/views/serversTree';
import { statusMenu } from '../src/statusMenu';
import { ServersModel } from '../../../frontend/src/model';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));

function st(name: string, over: Partial<ServerStatus>): ServerStatus {
	return { name, scope: 'user', type: 'local', state: 'connected', toolCount: 0, ...over };
}

test('actions: every per-server command has its title and is in the palette once the sidecar runs', () => {
	for (const [action, w] of Object.entries(actionWords)) {
		const id = `freecode.server.${action}`;
		const cmd = pkg.contributes.commands.find((c: { command: string }) => c.command === id);
		assert.ok(cmd, `${id} is not contributed`);
		assert.equal(cmd.title, w.title, id);
		const pal = pkg.contributes.menus.commandPalette.filter((c: { command: string }) => c.command === id);
		assert.deepEqual(
			pal.map((c: { when: string }) => c.when),
			['freecode.sidecar == running && freecode.serverCount > 0'],
			id,
		);
	}
});

test('actions: the view offers an action exactly when canDo says it applies', () => {
	const menus: { command: string; when: string; group: string }[] = pkg.contributes.menus['view/item/context'];
	// Every state, in both scopes and both types.
	const statuses = ServerStateValues.filter((s) => s !== 'removed').flatMap((state) =>
		(['user', 'project'] as const).flatMap((scope) =>
			(['local', 'remote'] as const).map((type) => st('x', { state, scope, type })),
		),
	);
	for (const action of ['start', 'stop', 'restart', 'enable', 'disable', 'remove', 'setSecret'] as ServerAction[]) {
		const entries = menus.filter((m) => m.command === `freecode.server.${action}`);
		assert.ok(entries.length > 0, action);
		for (const e of entries) {
			const m = /viewItem =~ \/(.*)\/$/.exec(e.when);
			assert.ok(m, `${action}: ${e.when}`);
			const re = new RegExp(m[1]);
			for (const s of statuses) {
				assert.equal(re.test(serverNode(s, []).contextValue), canDo(action, s), `${action} on ${s.scope} ${s.type} ${s.state}`);
			}
			// A server that misses a secret has Set Secret… alone inline (see below).
			if (e.group === 'inline@2' && action === 'start') continue;
			const needs = st('x', { state: 'failed', lastErrorKind: 'secret', missingSecrets: ['T'] });
			assert.equal(re.test(serverNode(needs, []).contextValue), canDo(action, needs), `${action} on a server that misses a secret`);
		}
	}
});

test('actions: a failed row has Show Server Log inline', () => {
	const menus: { command: string; when: string; group: string }[] = pkg.contributes.menus['view/item/context'];
	const inline = menus.filter((m) => m.command === 'freecode.server.showLog' && m.group.startsWith('inline'));
	assert.equal(inline.length, 1);
	const re = new RegExp(/viewItem =~ \/(.*)\/$/.exec(inline[0].when)![1]);
	assert.ok(re.test(serverNode(st('x', { state: 'failed' }), []).contextValue));
	assert.ok(!re.test(serverNode(st('x', { state: 'connected' }), []).contextValue));
});

test('actions: the picker offers only the servers an action applies to, failed ones with why', () => {
	const servers = [
		st('a', {}),
		st('b', { state: 'failed', lastError: 'exited with code 3: error: GITHUB_TOKEN is not set' }),
		st('c', { state: 'disabled' }),
		st('p', { scope: 'project', state: 'stopped' }),
	];
	assert.deepEqual(serverPicks(servers, 'start'), [
		{ label: 'b', description: 'failed: exited with code 3: error: GITHUB_TOKEN is not set', name: 'b' },
		{ label: 'p', description: 'stopped', name: 'p' },
	]);
	assert.deepEqual(serverPicks(servers, 'enable').map((p) => p.name), ['c']);
	// A project's server is the repository's entry: not the user's config to edit.
	assert.deepEqual(serverPicks(servers, 'remove').map((p) => p.name), ['a', 'b', 'c']);
	assert.deepEqual(serverPicks(servers, 'showLog').map((p) => p.name), ['a', 'b', 'c', 'p']);
	assert.deepEqual(serverPicks(servers, 'signIn'), []);
});

test('actions: a server that misses a secret has Set Secret… inline and first in its menu; the status menu offers it first', () => {
	const menus: { command: string; when: string; group: string }[] = pkg.contributes.menus['view/item/context'];
	const entries = menus.filter((m) => m.command === 'freecode.server.setSecret');
	assert.deepEqual(entries.map((e) => e.group), ['inline@0', '0_fix@1']);
	const needs = st('github', { state: 'failed', lastErrorKind: 'secret', lastError: 'secret GITHUB_TOKEN is not set', missingSecrets: ['GITHUB_TOKEN'] });
	const node = serverNode(needs, []);
	assert.match(node.contextValue, /\bcan:setSecret\b/);
	assert.equal(node.description, 'needs a secret');
	assert.deepEqual(node.icon, { id: 'key', color: 'editorWarning.foreground' });
	assert.doesNotMatch(serverNode(st('b', { state: 'failed', lastErrorKind: 'exited' }), []).contextValue, /setSecret/);
	// Set Secret… is its one button on a hovered row, which leaves its words
	// room: Start would fail the same way until the secret is set, and its log
	// holds nothing. Both stay in its menu.
	const inline = (contextValue: string): string[] =>
		menus
			.filter((e) => {
				const m = /viewItem =~ \/(.*)\/$/.exec(e.when);
				return e.group.startsWith('inline') && m !== null && new RegExp(m[1]).test(contextValue);
			})
			.map((e) => e.command)
			.sort();
	assert.deepEqual(inline(node.contextValue), ['freecode.server.setSecret']);
	const failed = serverNode(st('b', { state: 'failed', lastErrorKind: 'exited' }), []).contextValue;
	assert.deepEqual(inline(failed), ['freecode.server.showLog', 'freecode.server.start']);
	const m = new ServersModel();
	m.setServers([st('a', {}), needs]);
	const items = statusMenu('running', m.summary());
	assert.deepEqual(items[0], { label: '$(key) Set Secret…', description: 'needed by github', command: 'freecode.server.setSecret' });
	assert.deepEqual(items.slice(1, 3).map((i) => i.command), ['freecode.server.showLog', 'freecode.server.restart']);
});

test('status menu: what is wrong comes first, then the everyday actions', () => {
	const m = new ServersModel();
	m.setServers([st('a', {}), st('b', { state: 'failed' })]);
	m.setProblems({ path: '/c.json', problems: [{ message: 'x', severity: 'error' }] });
	assert.deepEqual(
		statusMenu('running', m.summary()).map((i) => i.command),
		[
			'freecode.showConfigProblems',
			'freecode.server.showLog',
			'freecode.server.restart',
			'freecode.servers.focus',
			'freecode.runTool',
			'freecode.addServer',
			'freecode.importServers',
			'freecode.openConfig',
			'freecode.showSidecarLog',
		],
	);
	assert.deepEqual(
		statusMenu('missing', new ServersModel().summary()).map((i) => i.command),
		['freecode.showSidecarLog', 'freecode.restartSidecar', 'workbench.action.openSettings'],
	);
	// Every command the menu runs is the extension's or VS Code's own.
	const ours = new Set(pkg.contributes.commands.map((c: { command: string }) => c.command));
	for (const i of statusMenu('running', m.summary())) {
		assert.ok(ours.has(i.command) || i.command === 'freecode.servers.focus', i.command);
	}
});

test('config entry: found by its name member or its key, not in a comment, in a file that does not parse', () => {
	const list = '{\n  "mcp": {\n    "servers": [\n      // { "name": "gh" } was here\n      { "name": "fs", "command": ["x"] },\n      {\n        "name" : "gh",\n';
	assert.deepEqual(entryPosition(list, 'gh'), { line: 6, character: 8 });
	assert.deepEqual(entryPosition(list, 'fs'), { line: 4, character: 8 });
	assert.equal(entryPosition(list, 'f'), undefined);
	const map = '{ "mcpServers": {\n\t"my.server": { "command": "node" } } }';
	assert.deepEqual(entryPosition(map, 'my.server'), { line: 1, character: 1 });
});
