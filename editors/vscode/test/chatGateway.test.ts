import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { GATEWAY_PROVIDER, gatewayDefinition } from '../src/chatGateway';
import type { Settings } from '../src/settings';

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
const base: Settings = { serverPath: '/e/bin/freecode-serve', serverPathFromSetting: false, cliPath: '/e/bin/freecode', trace: 'off', argumentChars: 1200, problems: [] };

test('chat gateway: one stdio server, freecode mcp serve --stdio, for the workspace folder', () => {
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
