// What a tool's row says of its annotations, as both frontends show it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerStatus, ToolInfo } from '../src/protocol.gen';
import { serverRow, toolRow } from '../src/rows';

const tool = (over: Partial<ToolInfo>): ToolInfo => ({ id: 'mcp__demo__write_file', server: 'demo', name: 'write_file', description: '', readOnly: false, inputSchema: {}, ...over });

test('rows: an idempotent tool that writes says a lost answer is sent again; a read-only one need not', () => {
	assert.match(toolRow(tool({ idempotent: true })).tooltip, /\nIdempotent: a call whose answer was lost is sent once more\.$/);
	assert.doesNotMatch(toolRow(tool({})).tooltip, /Idempotent/);
	assert.doesNotMatch(toolRow(tool({ idempotent: true, readOnly: true })).tooltip, /Idempotent/);
});

test("rows: a server the organization's policy blocks says so, with the entry and file, and is not counted ready", () => {
	const s: ServerStatus = {
		name: 'scraper',
		scope: 'user',
		type: 'local',
		state: 'blocked',
		toolCount: 0,
		command: ['npx', '-y', 'some-scraper'],
		blocked: "blocked by your organization's policy: deniedMcpServers[2] in /etc/freecode/managed-settings.json — ask #it-help",
	};
	const row = serverRow(s, []);
	assert.equal(row.description, 'blocked by policy: deniedMcpServers[2] in /etc/freecode/managed-settings.json — ask #it-help');
	assert.match(row.tooltip, /^scraper — blocked by policy\n/);
	assert.match(row.tooltip, /\nblocked by your organization's policy: deniedMcpServers\[2\] in \/etc\/freecode\/managed-settings\.json — ask #it-help It does not run; `freecode policy` shows the whole policy\./);
	const managed = serverRow({ ...s, scope: 'managed', state: 'connected', blocked: undefined }, []);
	assert.match(managed.description, /organization's/);
	assert.match(managed.tooltip, /from your organization's managed settings/);
});

test('rows: a server whose secret is not set says what it needs, and where the secret will be kept', () => {
	const s: ServerStatus = {
		name: 'github',
		scope: 'user',
		type: 'local',
		state: 'failed',
		toolCount: 0,
		command: ['github-mcp-server', 'stdio'],
		lastError: 'secret GITHUB_TOKEN is not set (`freecode secret set GITHUB_TOKEN`)',
		lastErrorKind: 'secret',
		missingSecrets: ['GITHUB_TOKEN'],
	};
	const row = serverRow(s, []);
	assert.equal(row.description, 'needs a secret');
	assert.match(row.tooltip, /^github — failed\n/);
	assert.match(
		row.tooltip,
		/\nNeeds the secret GITHUB_TOKEN, which is not set: Set Secret… asks for its value and keeps it in your OS keychain \(where there is none, in a file only you can read\), never in a config file\.\nlast error: secret GITHUB_TOKEN is not set/,
	);
	// Names too long for the row are in its tooltip only.
	const two = serverRow({ ...s, missingSecrets: ['GITHUB_TOKEN', 'GITHUB_HOST'], scope: 'project' }, []);
	assert.equal(two.description, 'needs 2 secrets · project');
	assert.match(two.tooltip, /\nNeeds the secrets GITHUB_TOKEN, GITHUB_HOST, which are not set/);
	// Any other failure keeps its error's words, and says nothing of secrets.
	const exited = serverRow({ ...s, lastErrorKind: 'exited', lastError: 'exited with code 3', missingSecrets: undefined }, []);
	assert.equal(exited.description, 'failed: exited with code 3');
	assert.doesNotMatch(exited.tooltip, /secret/i);
});

test('rows: a server installed from the MCP Registry says which server and version, and which registry when not the public one', () => {
	const s: ServerStatus = {
		name: 'everything',
		scope: 'user',
		type: 'local',
		state: 'stopped',
		toolCount: 0,
		command: ['npx', '-y', '@modelcontextprotocol/server-everything@2026.8.31'],
		registry: { name: 'io.github.modelcontextprotocol/everything', version: '2026.8.31', url: 'https://registry.modelcontextprotocol.io' },
	};
	const row = serverRow(s, []);
	assert.match(row.tooltip, /\ncommand: npx -y @modelcontextprotocol\/server-everything@2026\.8\.31\nfrom the MCP Registry: io\.github\.modelcontextprotocol\/everything@2026\.8\.31$/);
	const corp = serverRow({ ...s, registry: { ...s.registry!, url: 'https://registry.corp.example', name: 'io.corp/x\u001b[2J' } }, []);
	assert.match(corp.tooltip, /\nfrom the MCP Registry: io\.corp\/x\\x1b\[2J@2026\.8\.31 \(https:\/\/registry\.corp\.example\)$/);
	assert.doesNotMatch(serverRow({ ...s, registry: undefined }, []).tooltip, /Registry/);
});
