import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ToolResult } from '../src/protocol';
import { resultDocument, resultSummary } from '../src/resultText';

const results: ToolResult[] = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'ToolResult.json'), 'utf8'),
);

test('result: summaries say ran, denied, not run', () => {
	assert.deepEqual(
		results.map((r) => resultSummary('mcp__demo__x', r)),
		[
			'mcp__demo__x ran in 3 ms',
			'mcp__demo__x was denied: mcp__demo__delete_file was denied by the user',
			'mcp__demo__x ran in 12 ms',
			"mcp__demo__x was not run: invalid arguments for mcp__demo__read_file (1 error); the tool was not called: - /: missing property 'path'",
		],
	);
});

test('result: the document has every content block, structured content and the cut', () => {
	assert.equal(
		resultDocument('mcp__demo__create_issue', results[2]),
		[
			'mcp__demo__create_issue — ok, allowed by the rules, 12 ms',
			'='.repeat(57),
			'',
			'Created issue #1: hello',
			'',
			'[image: image/png (8 bytes)]',
			'',
			'structuredContent:',
			'{\n  "number": 1,\n  "title": "hello"\n}',
			'',
			'(cut: 50000 of 120000 characters shown; the whole result is in /home/me/.cache/freecode/results/c3.txt)',
			'',
		].join('\n'),
	);
});
