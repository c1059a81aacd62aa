import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argumentsDocument, parseArgumentsDocument, resolved, sample, shapeOf } from '../src/schemaPrefill';

const cases: { name: string; schema: unknown; want: unknown }[] = [
	{
		name: 'required fields only, by type',
		schema: {
			type: 'object',
			properties: {
				path: { type: 'string' },
				offset: { type: 'integer', minimum: 1 },
				limit: { type: 'integer' },
				recursive: { type: 'boolean' },
			},
			required: ['path', 'offset', 'recursive'],
		},
		want: { path: '', offset: 1, recursive: false },
	},
	{
		name: 'default, const, enum and examples win over the type',
		schema: {
			type: 'object',
			properties: {
				a: { type: 'integer', default: 5 },
				b: { const: 'fixed' },
				c: { type: 'string', enum: ['low', 'medium', 'high'] },
				d: { type: 'string', examples: ['hello'] },
			},
			required: ['a', 'b', 'c', 'd'],
		},
		want: { a: 5, b: 'fixed', c: 'low', d: 'hello' },
	},
	{
		name: 'nested required objects and arrays with minItems',
		schema: {
			type: 'object',
			properties: {
				user: { type: 'object', properties: { login: { type: 'string' }, id: { type: 'number' } }, required: ['login'] },
				tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
				list: { type: 'array', items: { type: 'string' } },
			},
			required: ['user', 'tags', 'list'],
		},
		want: { user: { login: '' }, tags: [''], list: [] },
	},
	{
		name: '$ref into $defs (the demo server create_issue shape)',
		schema: {
			type: 'object',
			$defs: { user: { type: 'object', properties: { login: { type: 'string' } }, required: ['login'] } },
			properties: { title: { type: 'string' }, assignee: { $ref: '#/$defs/user' } },
			required: ['title', 'assignee'],
		},
		want: { title: '', assignee: { login: '' } },
	},
	{
		name: 'a recursive $ref stops instead of looping',
		schema: {
			type: 'object',
			definitions: { node: { type: 'object', properties: { child: { $ref: '#/definitions/node' } }, required: ['child'] } },
			properties: { root: { $ref: '#/definitions/node' } },
			required: ['root'],
		},
		want: { root: { child: { child: { child: { child: { child: { child: { child: { child: null } } } } } } } } },
	},
	{
		name: 'nullable types, anyOf and allOf',
		schema: {
			type: 'object',
			allOf: [{ properties: { x: { type: 'number' } }, required: ['x'] }],
			properties: { n: { type: ['null', 'string'] }, u: { anyOf: [{ type: 'null' }, { type: 'integer', exclusiveMinimum: 0 }] } },
			required: ['n', 'u'],
		},
		want: { n: '', u: 1, x: 0 },
	},
	{ name: 'no schema at all', schema: undefined, want: null },
	{ name: 'an empty object schema', schema: { type: 'object' }, want: {} },
];

for (const tc of cases) {
	test(`prefill: ${tc.name}`, () => {
		assert.deepEqual(sample(tc.schema), tc.want);
	});
}

test('prefill: the document names the optional properties and parses back', () => {
	const doc = argumentsDocument('mcp__demo__read_file', {
		type: 'object',
		properties: {
			path: { type: 'string', description: 'File to read' },
			offset: { type: 'integer', description: 'First line' },
			mode: { type: 'string', enum: ['text', 'raw'] },
		},
		required: ['path'],
	});
	assert.equal(
		doc,
		[
			'// Arguments for mcp__demo__read_file.',
			'// Edit them, then run "FreeCode: Run Tool with These Arguments"',
			'// (the ▶ button of this editor). Lines starting with // are ignored.',
			'// Optional:',
			'//   offset: integer: First line',
			'//   mode: string: one of "text", "raw"',
			'{',
			'  "path": ""',
			'}',
			'',
		].join('\n'),
	);
	assert.deepEqual(parseArgumentsDocument(doc.replace('""', '"README.md"')), { value: { path: 'README.md' } });
});

test('prefill: a string holding // is not taken for a comment', () => {
	assert.deepEqual(parseArgumentsDocument('{\n  "url": "https://example.com//x"\n}'), {
		value: { url: 'https://example.com//x' },
	});
});

test('prefill: edited text that is not JSON says so', () => {
	const r = parseArgumentsDocument('// c\n{ "path": }');
	assert.equal(r.value, undefined);
	assert.match(r.error ?? '', /^The arguments are not JSON: /);
});

test('shapeOf reads the top properties and required list through $ref and allOf', () => {
	const schema = {
		$ref: '#/$defs/args',
		$defs: {
			args: { allOf: [{ properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { $ref: '#/$defs/n' } } }] },
			n: { type: 'integer', minimum: 2 },
		},
	};
	const s = shapeOf(schema);
	assert.deepEqual(Object.keys(s.properties).sort(), ['a', 'b']);
	assert.deepEqual(s.required, ['a']);
	assert.deepEqual(resolved(s.properties.b, s.root), { type: 'integer', minimum: 2 });
	assert.deepEqual(shapeOf(undefined), { properties: {}, required: [], root: {} });
});
