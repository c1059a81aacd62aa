import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ReviewNeeded } from '../src/protocol.gen';
import { reviewDocument } from '../src/reviewText';

const needed: ReviewNeeded[] = JSON.parse(
	readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'ReviewNeeded.json'), 'utf8'),
);

test('review: the document says what the review is about, then the change', () => {
	const [changed, rejected] = needed[0].reviews;
	const doc = reviewDocument(changed);
	assert.ok(doc.startsWith('// mcp__demo__write_file: its definition changed since you accepted it\n'), doc);
	assert.ok(doc.includes('// Models are not shown this tool meanwhile'), doc);
	assert.ok(doc.endsWith(changed.diff), doc);
	const rej = reviewDocument(rejected);
	assert.ok(rej.startsWith('// mcp__demo__grep: a new tool\n// You rejected this definition'), rej);
});

test('review: what the server wrote is made printable', () => {
	const r = { ...needed[0].reviews[0], diff: 'x: definition changed\n  description: {+\u001b]52;c;aGk=\u0007+}\n' };
	const doc = reviewDocument(r);
	assert.ok(!/[\u001b\u0007]/.test(doc), doc);
	assert.ok(doc.includes('{+\\x1b]52;c;aGk=\\x07+}'), doc);
});
