import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ToolResult } from '../src/protocol.gen';
import { resultDocument, resultSummary } from '../src/resultText';

const fixtures: ToolResult[] = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'ToolResult.json'), 'utf8'),
);

const text = (t: string) => ({ type: 'text', text: t });
const result = (over: Partial<ToolResult>): ToolResult => ({
	callId: 'c',
	content: [],
	isError: false,
	decision: 'allowed',
	durationMs: 0,
	...over,
});

const summaries: { name: string; r: ToolResult; want: string }[] = [
	{ name: 'allowed', r: result({ content: [text('ok')], durationMs: 12.5 }), want: 'mcp__demo__x ran in 12.5 ms' },
	{ name: 'asked and allowed', r: result({ decision: 'asked', durationMs: 3 }), want: 'mcp__demo__x ran in 3 ms' },
	{
		name: 'denied, with the first text block on one line',
		r: result({ decision: 'denied', isError: true, content: [{ type: 'image', data: '' }, text('denied:\nyou said no')] }),
		want: 'mcp__demo__x was denied: denied: you said no',
	},
	{
		name: 'denied, in words that name the tool already',
		r: result({ decision: 'denied', isError: true, content: [text('mcp__demo__x was denied by the user')] }),
		want: 'mcp__demo__x was denied by the user',
	},
	{
		name: 'invalid arguments',
		r: result({ decision: 'invalid', isError: true, content: [text("missing property 'path'")] }),
		want: "mcp__demo__x was not run: missing property 'path'",
	},
	{
		name: 'a call whose answer was lost and that was not sent again',
		r: result({ isError: true, outcomeUnknown: true, content: [text('mcp__demo__x: outcome unknown, not retried')] }),
		want: 'mcp__demo__x may or may not have run: outcome unknown, not retried',
	},
	{
		name: 'a tool error',
		r: result({ isError: true, content: [text('no such file')] }),
		want: 'mcp__demo__x failed: no such file',
	},
];

for (const tc of summaries) {
	test(`result: summary of ${tc.name}`, () => {
		assert.equal(resultSummary('mcp__demo__x', tc.r), tc.want);
	});
}

test('result: the document has every content block, structured content and the cut', () => {
	const r = result({
		content: [text('Created issue #1: hello'), { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }],
		structuredContent: { number: 1, title: 'hello' },
		durationMs: 12.5,
		truncated: { shownChars: 50000, totalChars: 120000, savedTo: '/tmp/freecode-results/c3.txt' },
	});
	assert.equal(
		resultDocument('mcp__demo__create_issue', r),
		[
			'mcp__demo__create_issue — ok, allowed by the rules, 12.5 ms',
			'='.repeat(59),
			'',
			'Created issue #1: hello',
			'',
			'[image: image/png (8 bytes)]',
			'',
			'structuredContent:',
			'{\n  "number": 1,\n  "title": "hello"\n}',
			'',
			'(cut: 50000 of 120000 characters shown; the whole result is in /tmp/freecode-results/c3.txt)',
			'',
		].join('\n'),
	);
});

test('result: every fixture result shows each of its text blocks and where a cut result was saved', () => {
	for (const r of fixtures) {
		const doc = resultDocument('t', r);
		for (const c of r.content) if (c.type === 'text') assert.ok(doc.includes(String(c.text)), doc);
		if (r.truncated?.savedTo) assert.ok(doc.includes(r.truncated.savedTo), doc);
		assert.ok(resultSummary('t', r).startsWith('t '));
	}
});

test('result document: a call that did not run says so, not "error"', () => {
	const denied = resultDocument('mcp__demo__delete_file', { callId: 'c', content: [{ type: 'text', text: 'denied by the user' }], isError: true, decision: 'denied', durationMs: 0 });
	assert.ok(denied.startsWith('mcp__demo__delete_file — denied, 0 ms\n'), denied);
	const invalid = resultDocument('t', { callId: 'c', content: [], isError: true, decision: 'invalid', durationMs: 1 });
	assert.ok(invalid.startsWith('t — not run: invalid arguments, 1 ms\n'), invalid);
	const failed = resultDocument('t', { callId: 'c', content: [], isError: true, decision: 'asked', durationMs: 2 });
	assert.ok(failed.startsWith('t — error, allowed by you, 2 ms\n'), failed);
});
