// Keeps the generated protocol (frontend/src/protocol.gen.ts) and the Go
// sidecar's wire types in step end to end: the JSON in test/fixtures, which
// the Go side writes from its types, must fit the checks generated from the
// same types exactly, and fill every field of them. A generator that read a
// Go type wrongly (omitempty, a nested type, a map) fails here.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fieldPaths, seenPaths, validate, type Check } from '../src/check';
import { checks, frontendRequests, ReadResourceResult, ServerStatus, sidecarNotifications, sidecarRequests, ToolResult } from '../src/protocol.gen';

const dir = join(__dirname, '..', '..', 'test', 'fixtures');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

function load(file: string): unknown[] {
	const v = JSON.parse(readFileSync(join(dir, file), 'utf8'));
	assert.ok(Array.isArray(v), `${file}: want an array of examples`);
	assert.ok(v.length > 0, `${file}: no examples`);
	return v;
}

/** shapeOf is the check of the type a fixture file is named after. */
const shapeOf = (file: string): Check<unknown> => checks[file.replace(/\.json$/, '')];

test('every fixture file is named after a type of the protocol', () => {
	assert.deepEqual(
		files.filter((f) => !shapeOf(f)),
		[],
	);
});

test('every method of the table has a check for its params and, for a request, its result', () => {
	for (const [m, c] of Object.entries({ ...frontendRequests, ...sidecarRequests })) {
		assert.equal(typeof c.params, 'function', m);
		assert.equal(typeof c.result, 'function', m);
	}
	for (const [m, c] of Object.entries(sidecarNotifications)) assert.equal(typeof c, 'function', m);
});

for (const file of files) {
	test(`${file} fits the TypeScript type`, () => {
		const shape = shapeOf(file);
		assert.ok(shape, `no shape for ${file}`);
		const examples = load(file);
		const errs = examples.flatMap((ex, i) => validate(shape, ex, `${file}[${i}]`));
		assert.deepEqual(errs, []);
	});

	test(`${file} fills every field of the type`, () => {
		const shape = shapeOf(file);
		const seen = new Set<string>();
		for (const ex of load(file)) seenPaths(shape, ex, '$', seen);
		const missing = fieldPaths(shape).filter((p) => !seen.has(p));
		assert.deepEqual(missing, [], `no example of ${file} has these fields, so a rename of them would pass unseen`);
	});
}

// The checks must fail on the kinds of drift they exist for; if one of these
// passed, the fixture tests above could not fail either.
const drift: { name: string; check: Check<unknown>; value: unknown; want: string[] }[] = [
	{
		name: 'a renamed required field',
		check: ServerStatus as Check<unknown>,
		value: { name: 'a', scope: 'user', type: 'local', state: 'connected', tools: 3 },
		want: ['$.toolCount: missing', '$.tools: not a field of this type'],
	},
	{
		name: 'a renamed optional field',
		check: ServerStatus as Check<unknown>,
		value: { name: 'a', scope: 'user', type: 'local', state: 'connected', toolCount: 3, lastPing: 2 },
		want: ['$.lastPing: not a field of this type'],
	},
	{
		name: 'a state the extension does not know',
		check: ServerStatus as Check<unknown>,
		value: { name: 'a', scope: 'user', type: 'local', state: 'sleeping', toolCount: 0 },
		want: [
			'$.state: want one of disabled, awaitingApproval, needsAuth, connecting, connected, reconnecting, failed, stopped, removed, idle, blocked, got "sleeping"',
		],
	},
	{
		name: 'a nested field of the wrong type',
		check: ToolResult as Check<unknown>,
		value: {
			callId: 'c',
			content: [{ type: 'text', text: 'x' }, { text: 'no type' }],
			isError: 'no',
			decision: 'allowed',
			durationMs: 1,
			truncated: { shownChars: 1, totalChars: 2, savedTo: 3 },
		},
		want: [
			'$.content[1].type: missing',
			'$.isError: want a boolean, got string',
			'$.truncated.savedTo: want a string, got number',
		],
	},
	{
		name: "nothing in an MCP payload's fields a newer MCP adds, and the wrong type in one it names",
		check: ReadResourceResult as Check<unknown>,
		value: { contents: [{ uri: 'ui://a', text: 1, annotations: {} }], ttlMs: 60000, cacheScope: 'session' },
		want: ['$.contents[0].text: want a string, got number'],
	},
];

for (const tc of drift) {
	test(`the shapes catch ${tc.name}`, () => {
		assert.deepEqual(validate(tc.check, tc.value), tc.want);
	});
}
