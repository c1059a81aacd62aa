// What a tool's row says of its annotations, as both frontends show it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolInfo } from '../src/protocol.gen';
import { toolRow } from '../src/rows';

const tool = (over: Partial<ToolInfo>): ToolInfo => ({ id: 'mcp__demo__write_file', server: 'demo', name: 'write_file', description: '', readOnly: false, inputSchema: {}, ...over });

test('rows: an idempotent tool that writes says a lost answer is sent again; a read-only one need not', () => {
	assert.match(toolRow(tool({ idempotent: true })).tooltip, /\nIdempotent: a call whose answer was lost is sent once more\.$/);
	assert.doesNotMatch(toolRow(tool({})).tooltip, /Idempotent/);
	assert.doesNotMatch(toolRow(tool({ idempotent: true, readOnly: true })).tooltip, /Idempotent/);
});
