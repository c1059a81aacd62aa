import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { chatServers, DefinitionChanges, GATEWAY_PROVIDER, gatewayDefinition, httpDefinitions } from '../src/chatGateway';
import type { ServerState } from '../../../frontend/src/protocol.gen';
import type { Settings } from '../src/settings';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
const base: Settings = { serverPath: '/e/bin/freecode-serve', serverPathFromSetting: false, cliPath: '/e/bin/freecode', trace: 'off', argumentChars: 1200, problems: [] };

test('chat gateway, fallback: one stdio server, freecode mcp serve --stdio, for the workspace folder', () => {
	const d = gatewayDefinition(base, true, '/w/app', '0.1.0');
	assert.ok(d);
	assert.deepEqual([d.label, d.command, d.args, d.project], ['FreeCode', '/e/bin/freecode', ['mcp', 'serve', '--stdio', '--project', '/w/app'], '/w/app']);
	assert.match(d.version, /^0\.1\.0\+[0-9a-f]+$/);
	// The config the sidecar reads is the gateway's too.
	const c = gatewayDefinition({ ...base, configPath: '/c.json' }, true, undefined, '0.1.0')!;
	assert.deepEqual(c.args, ['--config', '/c.json', 'mcp', 'serve', '--stdio']);
	assert.notEqual(c.version, d.version);
});

test('chat gateway: the setting turns it off', () => {
	assert.equal(gatewayDefinition(base, false, '/w', '0.1.0'), undefined);
	const setting = pkg.contributes.configuration.properties['freecode.vscodeChat.enabled'];
	assert.equal(setting.default, true);
});

test('chat gateway: the provider id is the one package.json contributes and activates on', () => {
	assert.deepEqual(pkg.contributes.mcpServerDefinitionProviders.map((p: { id: string }) => p.id), [GATEWAY_PROVIDER]);
	assert.ok(pkg.activationEvents.includes(`onMcpServerDefinitionProvider:${GATEWAY_PROVIDER}`));
});

const gw = {
	token: 'k3y',
	servers: [
		{ name: 'demo', url: 'http://127.0.0.1:41234/mcp/demo' },
		{ name: 'fs', url: 'http://127.0.0.1:41234/mcp/fs' },
	],
};

test("chat gateway: one HTTP definition per FreeCode server, named after it, with the sidecar's token", () => {
	const ds = httpDefinitions(gw, '0.1.0');
	assert.deepEqual(
		ds.map((d) => [d.label, d.uri, d.headers]),
		[
			['demo', 'http://127.0.0.1:41234/mcp/demo', { Authorization: 'Bearer k3y' }],
			['fs', 'http://127.0.0.1:41234/mcp/fs', { Authorization: 'Bearer k3y' }],
		],
	);
	for (const d of ds) assert.match(d.version, /^0\.1\.0\+[0-9a-f]+$/);
	// A restarted sidecar (another token, or port) is another version, so VS Code connects again.
	const restarted = httpDefinitions({ ...gw, token: 'other' }, '0.1.0');
	assert.notEqual(restarted[0].version, ds[0].version);
	const moved = httpDefinitions({ ...gw, servers: [{ name: 'demo', url: 'http://127.0.0.1:5000/mcp/demo' }] }, '0.1.0');
	assert.notEqual(moved[0].version, ds[0].version);
	assert.deepEqual(httpDefinitions({ token: 'k3y', servers: [] }, '0.1.0'), []);
});

const st = (name: string, state: ServerState) => ({ name, state });

test('chat gateway: the servers whose tools can come, as the sidecar lists them', () => {
	assert.deepEqual(
		chatServers([
			st('zeta', 'connected'),
			st('off', 'disabled'),
			st('repo', 'awaitingApproval'),
			st('org', 'blocked'),
			st('gone', 'removed'),
			st('lazy', 'idle'),
			st('broken', 'failed'),
			st('auth', 'needsAuth'),
			st('alpha', 'connecting'),
		]),
		['alpha', 'auth', 'broken', 'lazy', 'zeta'],
	);
});

test('chat gateway: VS Code asks again when the servers or the sidecar change, not when a state within them does', () => {
	const c = new DefinitionChanges();
	assert.equal(c.update([], 0), true, 'the first is a change: VS Code may have been offered nothing');
	assert.equal(c.update([], 0), false);
	assert.equal(c.update([st('demo', 'connecting')], 0), true, 'a server came');
	assert.equal(c.update([st('demo', 'connected')], 0), false, 'it connected: its endpoint says so itself');
	assert.equal(c.update([st('demo', 'failed')], 0), false);
	assert.equal(c.update([st('demo', 'connected')], 1), true, 'the sidecar restarted: another port and token');
	assert.equal(c.update([st('demo', 'connected'), st('fs', 'disabled')], 1), false, 'a disabled server gets no endpoint');
	assert.equal(c.update([st('demo', 'connected'), st('fs', 'connecting')], 1), true, 'it was enabled');
	assert.equal(c.update([st('fs', 'connecting'), st('demo', 'connected')], 1), false, 'the order is no change');
	assert.equal(c.update([st('fs', 'connecting')], 1), true, 'a server went');
});
