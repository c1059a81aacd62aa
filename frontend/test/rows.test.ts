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
