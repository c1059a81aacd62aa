import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
	checkPicks,
	content,
	fieldText,
	introText,
	oneStep,
	parseForm,
	parseInput,
	pickItems,
	prefill,
	urlButtons,
	urlConsent,
	type FormField,
} from '../src/elicitationForm';
import type { ElicitationRequest } from '../../../frontend/src/protocol.gen';

// A form with one field of each kind MCP allows, the way servers write them.
const schema = {
	type: 'object',
	properties: {
		repo: { type: 'string', title: 'Repository', description: 'owner/name', minLength: 3 },
		contact: { type: 'string', format: 'email' },
		count: { type: 'integer', minimum: 1, maximum: 10, default: 3 },
		ratio: { type: 'number' },
		private: { type: 'boolean', default: false },
		kind: { type: 'string', enum: ['bug', 'feature'] },
		team: { type: 'string', oneOf: [{ const: 't1', title: 'Platform' }, { const: 't2', title: 'Editor' }], default: 't2' },
		pet: { type: 'string', enum: ['p1', 'p2'], enumNames: ['Cats', 'Dogs'] },
		labels: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c'] }, maxItems: 2, default: ['a'] },
	},
	required: ['repo', 'count', 'kind'],
};

const req: ElicitationRequest = { server: 'gh', callId: 'c1', mode: 'form', message: 'Where should the issue go?', requestedSchema: schema };

function field(name: string): FormField {
	const f = parseForm(schema).fields.find((f) => f.name === name);
	assert.ok(f, name);
	return f;
}

test('form: every kind of field is read, with its title, bounds, default and choices', () => {
	const form = parseForm(schema);
	assert.deepEqual(form.problems, []);
	assert.deepEqual(
		form.fields.map((f) => [f.name, f.kind, f.required]),
		[
			['repo', 'string', true],
			['contact', 'string', false],
			['count', 'integer', true],
			['ratio', 'number', false],
			['private', 'boolean', false],
			['kind', 'enum', true],
			['team', 'enum', false],
			['pet', 'enum', false],
			['labels', 'multiEnum', false],
		],
	);
	assert.deepEqual(field('repo'), { name: 'repo', label: 'Repository', description: 'owner/name', kind: 'string', required: true, minLength: 3 });
	assert.deepEqual(field('count'), { name: 'count', label: 'count', kind: 'integer', required: true, default: 3, minimum: 1, maximum: 10 });
	assert.deepEqual(field('team').choices, [
		{ value: 't1', label: 'Platform' },
		{ value: 't2', label: 'Editor' },
	]);
	assert.deepEqual(field('pet').choices, [
		{ value: 'p1', label: 'Cats' },
		{ value: 'p2', label: 'Dogs' },
	]);
	assert.deepEqual(field('labels'), {
		name: 'labels',
		label: 'labels',
		kind: 'multiEnum',
		required: false,
		default: ['a'],
		choices: ['a', 'b', 'c'].map((v) => ({ value: v, label: v })),
		maxItems: 2,
	});
});

test('form: what a form cannot ask is a problem (the request is declined)', () => {
	assert.deepEqual(parseForm({ type: 'object', properties: { nested: { type: 'object', properties: {} } } }).problems, [
		'nested: a field of type "object", which a form cannot ask',
	]);
	assert.deepEqual(parseForm({ type: 'object', properties: { list: { type: 'array', items: { type: 'string' } } } }).problems, [
		'list: a list whose items are not a choice of values',
	]);
	assert.deepEqual(parseForm({ type: 'array' }).problems, ['the requested schema is not an object schema']);
	assert.deepEqual(parseForm(undefined), { fields: [], problems: [] });
});

const inputs: { field: string; text: string; want: ReturnType<typeof parseInput> }[] = [
	{ field: 'repo', text: '', want: { error: 'Repository is required.' } },
	{ field: 'repo', text: 'ab', want: { error: 'Enter at least 3 characters.' } },
	{ field: 'repo', text: 'a/b', want: { value: 'a/b' } },
	// A required field with a default may be left empty: the sidecar fills the default in.
	{ field: 'count', text: '', want: { leftOut: true } },
	{ field: 'count', text: '2.5', want: { error: 'Enter a whole number.' } },
	{ field: 'count', text: 'x', want: { error: 'Enter a number.' } },
	{ field: 'count', text: '0', want: { error: 'Enter at least 1.' } },
	{ field: 'count', text: '11', want: { error: 'Enter at most 10.' } },
	{ field: 'count', text: ' 7 ', want: { value: 7 } },
	{ field: 'ratio', text: '2.5', want: { value: 2.5 } },
	{ field: 'ratio', text: '', want: { leftOut: true } },
	{ field: 'contact', text: 'me', want: { error: 'Enter an email address, like name@example.com.' } },
	{ field: 'contact', text: 'me@example.com', want: { value: 'me@example.com' } },
];

for (const tc of inputs) {
	test(`form: ${tc.field} given ${JSON.stringify(tc.text)}`, () => {
		assert.deepEqual(parseInput(field(tc.field), tc.text), tc.want);
	});
}

test('form: formats of dates and URLs are checked', () => {
	const f = (format: string): FormField => ({ name: 'x', label: 'x', kind: 'string', required: true, format });
	assert.deepEqual(parseInput(f('date'), '2026-02-30x'), { error: 'Enter a date as YYYY-MM-DD.' });
	assert.deepEqual(parseInput(f('date'), '2026-05-01'), { value: '2026-05-01' });
	assert.deepEqual(parseInput(f('date-time'), '2026-05-01 10:00'), { error: 'Enter a date and time, like 2026-05-01T10:00:00Z.' });
	assert.deepEqual(parseInput(f('date-time'), '2026-05-01T10:00:00Z'), { value: '2026-05-01T10:00:00Z' });
	assert.deepEqual(parseInput(f('uri'), 'example.com'), { error: 'Enter a full URL, like https://example.com/.' });
	assert.deepEqual(parseInput(f('uri'), 'https://example.com/x'), { value: 'https://example.com/x' });
});

test('form: a text field starts with its default', () => {
	assert.equal(prefill(field('count')), '3');
	assert.equal(prefill(field('repo')), '');
});

test('form: choices put the default first and mark it; an optional one can be left out', () => {
	assert.deepEqual(pickItems(field('private')), [
		{ label: 'No', value: false, description: 'default' },
		{ label: 'Yes', value: true },
		{ label: 'Leave out', value: undefined },
	]);
	assert.deepEqual(pickItems(field('kind')), [
		{ label: 'bug', value: 'bug' },
		{ label: 'feature', value: 'feature' },
	]);
	assert.deepEqual(pickItems(field('team')), [
		{ label: 'Editor', value: 't2', description: 't2 · default' },
		{ label: 'Platform', value: 't1', description: 't1' },
		{ label: 'Leave out', value: undefined },
	]);
	// A multiple choice starts with its defaults picked.
	assert.deepEqual(pickItems(field('labels')), [
		{ label: 'a', value: 'a', description: 'default', picked: true },
		{ label: 'b', value: 'b' },
		{ label: 'c', value: 'c' },
	]);
});

test('form: a multiple choice is held to its bounds', () => {
	assert.deepEqual(checkPicks(field('labels'), ['a', 'b', 'c']), { error: 'Pick at most 2.' });
	assert.deepEqual(checkPicks(field('labels'), ['b']), { value: ['b'] });
	assert.deepEqual(checkPicks(field('labels'), []), { leftOut: true });
	const required: FormField = { ...field('labels'), required: true, default: undefined };
	assert.deepEqual(checkPicks(required, []), { error: 'Pick at least 1.' });
});

test('form: the words of the inputs say who asks, which step, and the rules', () => {
	assert.deepEqual(fieldText(req, field('count'), 2, 9), {
		title: 'gh asks (3/9): count',
		prompt: '(required, a whole number, ≥ 1, ≤ 10, default 3)',
		placeholder: '',
	});
	assert.deepEqual(fieldText(req, field('repo'), 0, 9).prompt, 'owner/name (required)');
	assert.equal(fieldText(req, field('ratio'), 3, 9).placeholder, 'Leave empty to leave it out');
	assert.deepEqual(introText(req, parseForm(schema)), {
		title: 'The MCP server gh asks you',
		placeholder: 'Where should the issue go?',
		fill: 'Fill in 9 fields',
	});
	// What the server wrote cannot hide behind control or bidi characters.
	assert.equal(introText({ ...req, message: 'pay \u202eevil' }, parseForm(schema)).placeholder, 'pay \\u202eevil');
});

test('form: the content holds what was answered, and nothing left out', () => {
	const answers = new Map<string, unknown>([
		['repo', 'a/b'],
		['count', undefined],
		['private', true],
	]);
	assert.deepEqual(content(answers), { repo: 'a/b', private: true });
});

test('url: the consent names the host and the whole URL; only web pages are offered', () => {
	const c = urlConsent({ server: 'pay', mode: 'url', message: 'Confirm the payment', url: 'https://pay.example.com/confirm?id=1&x=2' });
	assert.equal(c.message, 'The MCP server pay asks you to open a page on pay.example.com.');
	assert.equal(c.detail, 'Confirm the payment\n\nhttps://pay.example.com/confirm?id=1&x=2\n\nIt opens in your browser only if you choose Open.');
	assert.equal(c.refuse, undefined);
	assert.equal(urlConsent({ server: 's', mode: 'url', message: 'm', url: 'javascript:alert(1)' }).refuse, 'it is a javascript: URL, not a web page');
	assert.equal(urlConsent({ server: 's', mode: 'url', message: 'm', url: 'not a url' }).refuse, 'it is not a URL');
	assert.equal(urlConsent({ server: 's', mode: 'url', message: 'm' }).refuse, 'it is not a URL');
});

test('url: Enter and Escape open no page', () => {
	// VS Code's modal: Enter is the first button that is not a close
	// affordance; Escape is VS Code's Cancel when none is one.
	assert.equal(urlButtons[0].choice, 'decline');
	assert.ok(urlButtons.every((b) => !('isCloseAffordance' in b)));
});

test('form: a yes/no or single-choice question is one pick, with Decline among its answers', () => {
	const yesNo = { type: 'object', properties: { confirm: { type: 'boolean', title: 'Delete the branch?' } }, required: ['confirm'] };
	const r: ElicitationRequest = { ...req, message: 'The branch has unmerged commits.', requestedSchema: yesNo };
	const one = oneStep(r, parseForm(yesNo));
	assert.ok(one);
	assert.equal(one.title, 'The MCP server gh asks you: Delete the branch?');
	assert.equal(one.placeholder, 'The branch has unmerged commits.');
	assert.deepEqual(
		one.items.map((i) => [i.label, i.answer?.value, i.decline]),
		[
			['Yes', true, undefined],
			['No', false, undefined],
			['Decline', undefined, true],
		],
	);
	const choice = { type: 'object', properties: { kind: { type: 'string', enum: ['bug', 'feature'] } } };
	assert.deepEqual(
		oneStep(req, parseForm(choice))?.items.map((i) => i.label),
		['bug', 'feature', 'Leave out', 'Decline'],
	);
	// Anything else keeps the step that asks whether to fill it in.
	assert.equal(oneStep(req, parseForm(schema)), undefined);
	assert.equal(oneStep(req, parseForm({ type: 'object', properties: { name: { type: 'string' } } })), undefined);
});
