import assert from 'node:assert/strict';
import { test } from 'node:test';
import { promptSchema, toolArguments, toolFields } from '../src/toolForm';

const schema = {
	type: 'object',
	properties: {
		path: { type: 'string', description: 'the file' },
		recursive: { type: 'boolean' },
		depth: { type: 'integer', minimum: 1 },
		mode: { type: 'string', enum: ['fast', 'full'] },
		tags: { type: 'array', items: { type: 'string' } },
		limit: { type: 'number', default: 10 },
	},
	required: ['depth', 'path', 'mode'],
};

test('fields: required first, prefilled as the extension prefills; optional empty unless defaulted', () => {
	const f = toolFields(schema);
	assert.deepEqual(
		f.map((x) => [x.name, x.kind, x.required, x.initial]),
		[
			['path', 'string', true, ''],
			['depth', 'integer', true, '1'],
			['mode', 'enum', true, '"fast"'],
			['recursive', 'boolean', false, ''],
			['tags', 'list', false, ''],
			['limit', 'number', false, '10'],
		],
	);
	assert.deepEqual(f[2].choices, ['"fast"', '"full"']);
	// What a select shows: the values, not their JSON.
	assert.deepEqual(f[2].labels, ['fast', 'full']);
	assert.equal(f[4].items, 'string');
	assert.equal(f[0].description, 'the file');
});

test('arguments: typed back, empty optional fields left out', () => {
	const f = toolFields(schema);
	const got = toolArguments(f, new Map([['path', 'a.txt'], ['depth', '3'], ['mode', '"full"'], ['recursive', 'true'], ['tags', 'x\n\n y '], ['limit', '']]));
	assert.deepEqual(got, { value: { path: 'a.txt', depth: 3, mode: 'full', recursive: true, tags: ['x', 'y'] } });
});

test('arguments: what is wrong is said per field, nothing is sent', () => {
	const f = toolFields(schema);
	const got = toolArguments(f, new Map([['path', ''], ['depth', '2.5'], ['mode', '']]));
	assert.ok('errors' in got);
	assert.deepEqual(
		got.errors.map((e) => e.field),
		['depth', 'mode'],
	);
	assert.match(got.errors[0].message, /whole number/);
});

test('a required boolean starts false; no schema is no field', () => {
	assert.equal(toolFields({ properties: { ok: { type: 'boolean' } }, required: ['ok'] })[0].initial, 'false');
	assert.deepEqual(toolFields(undefined), []);
	assert.deepEqual(toolArguments([], new Map()), { value: {} });
});

test("a prompt's arguments are string fields, required as it says", () => {
	const f = toolFields(promptSchema({ server: 's', name: 'p', arguments: [{ name: 'topic', required: true, description: 'what about' }, { name: 'tone' }] }));
	assert.deepEqual(
		f.map((x) => [x.name, x.kind, x.required, x.initial, x.description]),
		[
			['topic', 'string', true, '', 'what about'],
			['tone', 'string', false, '', undefined],
		],
	);
	assert.deepEqual(toolArguments(f, new Map([['topic', 'cats'], ['tone', '']])), { value: { topic: 'cats' } });
});

test('a list of numbers is one a line, each checked; an array of objects stays JSON, prefilled', () => {
	const f = toolFields({
		properties: { ports: { type: 'array', items: { type: 'integer' } }, rows: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } } },
		required: ['ports', 'rows'],
	});
	assert.deepEqual(
		f.map((x) => [x.name, x.kind]),
		[
			['ports', 'list'],
			['rows', 'json'],
		],
	);
	const bad = toolArguments(f, new Map([['ports', '80\nhttp'], ['rows', '[]']]));
	assert.ok('errors' in bad && bad.errors[0].message === 'not a whole number: http', JSON.stringify(bad));
	assert.deepEqual(toolArguments(f, new Map([['ports', '80\n443'], ['rows', '[{"a":"x"}]']])), { value: { ports: [80, 443], rows: [{ a: 'x' }] } });
	// An object field says its shape where it is empty.
	assert.equal(f[1].example, '[{"a":""}]');
});
