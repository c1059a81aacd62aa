import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
	ACCEPT_CHANGE,
	ACCEPT_NEW,
	ALLOW_EVERYWHERE,
	ALLOW_ONCE,
	ALLOW_PROJECT,
	answerFor,
	CANCEL_DENIES,
	type Choice,
	DENIED,
	DENY,
	permissionPrompt,
	SHOW_FULL,
	TRUST_AND_ALLOW_PROJECT,
	trustsFirst,
} from '../src/permissionChoices';
import type { PermissionRequest } from '../src/protocol.gen';

const req: PermissionRequest = {
	callId: 'c1',
	tool: 'mcp__demo__delete_file',
	server: 'demo',
	arguments: { path: 'README.md' },
	readOnly: false,
	reason: 'no rule; tool is not read-only',
	projectTrusted: true,
};

test('prompt: the tool, its server, read-only or not, why, and the arguments', () => {
	const p = permissionPrompt(req, 1200);
	assert.equal(p.message, 'Allow FreeCode to run mcp__demo__delete_file?');
	assert.equal(
		p.detail,
		[
			'Server: demo',
			'This tool can change things (not read-only).',
			'Why you are asked: No rule of yours covers this tool, and it can change things, so FreeCode asks before each call.',
			'Cancel and Escape deny, as Deny does: the tool does not run.',
			'',
			'Arguments:',
			'{\n  "path": "README.md"\n}',
		].join('\n'),
	);
	assert.equal(p.fullArguments, undefined);
});

test('prompt: a tool its server calls destructive says so', () => {
	const lines = (destructive?: boolean) => permissionPrompt(req, 1200, destructive).detail.split('\n')[1];
	assert.deepEqual(
		[lines(true), lines(false), lines(undefined), permissionPrompt({ ...req, readOnly: true }, 1200, true).detail.split('\n')[1]],
		[
			'This tool can change things, maybe for good (destructive, as its server describes it).',
			'This tool can change things (not read-only).',
			'This tool can change things (not read-only).',
			'This tool only reads (read-only).',
		],
	);
});

const answers: { name: string; req: PermissionRequest; pick: string | undefined; want: unknown; buttons: string[] }[] = [
	{
		name: 'Allow Once',
		req,
		pick: ALLOW_ONCE,
		want: { decision: 'allowOnce' },
		buttons: [DENY, ALLOW_ONCE, ALLOW_PROJECT, ALLOW_EVERYWHERE],
	},
	{
		name: 'Always Allow in This Project writes a local rule',
		req,
		pick: ALLOW_PROJECT,
		want: { decision: 'allowAlways', scope: 'local' },
		buttons: [DENY, ALLOW_ONCE, ALLOW_PROJECT, ALLOW_EVERYWHERE],
	},
	{
		name: 'Always Allow Everywhere writes a user rule',
		req,
		pick: ALLOW_EVERYWHERE,
		want: { decision: 'allowAlways', scope: 'user' },
		buttons: [DENY, ALLOW_ONCE, ALLOW_PROJECT, ALLOW_EVERYWHERE],
	},
	{ name: 'Deny', req, pick: DENY, want: { decision: 'deny' }, buttons: [DENY, ALLOW_ONCE, ALLOW_PROJECT, ALLOW_EVERYWHERE] },
	{
		name: 'Escape (no pick) is deny',
		req,
		pick: undefined,
		want: { decision: 'deny' },
		buttons: [DENY, ALLOW_ONCE, ALLOW_PROJECT, ALLOW_EVERYWHERE],
	},
	{
		name: 'an untrusted project has no project button, and its title counts as deny',
		req: { ...req, projectTrusted: false },
		pick: ALLOW_PROJECT,
		want: { decision: 'deny' },
		buttons: [DENY, ALLOW_ONCE, ALLOW_EVERYWHERE],
	},
];

for (const tc of answers) {
	test(`prompt: ${tc.name}`, () => {
		const p = permissionPrompt(tc.req, 1200);
		assert.deepEqual(
			p.choices.map((c) => c.title),
			tc.buttons,
		);
		assert.deepEqual(answerFor(p, tc.pick), tc.want);
		const keys = modalKeys(p.choices);
		assert.deepEqual(answerFor(p, keys.enter), DENIED, 'Enter denies');
		assert.deepEqual(answerFor(p, keys.escape), DENIED, 'Escape denies');
	});
}

/**
 * modalKeys is what Enter and Escape pick in VS Code's modal for these
 * items: a close affordance leaves the row to become the cancel button
 * (Escape, closing the dialog), VS Code adding a Cancel that answers
 * undefined when no item is one; the default button (Enter) is the first of
 * the row.
 */
function modalKeys(items: readonly Choice[]): { enter?: string; escape?: string } {
	const row = items.filter((c) => !c.isCloseAffordance);
	const close = items.filter((c) => c.isCloseAffordance);
	return { enter: row[0]?.title, escape: close[close.length - 1]?.title };
}

test('prompt: whatever the buttons, Enter and Escape deny', () => {
	const variants: PermissionRequest[] = [
		req,
		{ ...req, projectTrusted: false },
		{ ...req, arguments: { content: 'x'.repeat(5000) } },
		{ ...req, review: { kind: 'new', hash: 'h', diff: 'd', change: { tool: 't', kind: 'new' } } },
	];
	for (const r of variants) {
		const p = permissionPrompt(r, 300);
		assert.equal(p.choices[0].title, DENY);
		assert.deepEqual(
			p.choices.filter((c) => c.isCloseAffordance),
			[],
			'a close affordance would leave the row and make an allow the default',
		);
		const keys = modalKeys(p.choices);
		assert.deepEqual(answerFor(p, keys.enter), DENIED);
		assert.deepEqual(answerFor(p, keys.escape), DENIED);
	}
	// The model of VS Code's rule, on the order this module used to give:
	// Deny as the close affordance, last, made Allow Once the default.
	assert.deepEqual(
		modalKeys([
			{ title: ALLOW_ONCE, answer: { decision: 'allowOnce' } },
			{ title: DENY, answer: DENIED, isCloseAffordance: true },
		]),
		{ enter: ALLOW_ONCE, escape: DENY },
	);
});

test('prompt: long arguments are cut, with the whole text one click away', () => {
	const long = { content: 'x'.repeat(5000) };
	const p = permissionPrompt({ ...req, arguments: long }, 300);
	const full = JSON.stringify(long, null, 2);
	assert.equal(p.fullArguments, full);
	assert.ok(p.detail.includes(full.slice(0, 300)));
	assert.ok(!p.detail.includes(full.slice(0, 301)));
	assert.ok(p.detail.endsWith(`… ${full.length - 300} more characters: choose "${SHOW_FULL}" to read them all.`));
	assert.deepEqual(
		p.choices.map((c) => c.title),
		[DENY, ALLOW_ONCE, ALLOW_PROJECT, ALLOW_EVERYWHERE, SHOW_FULL],
	);
	assert.equal(answerFor(p, SHOW_FULL), 'showFull');
});

test('prompt: a read-only tool, a built-in, and control characters in what the project chose', () => {
	const p = permissionPrompt(
		{ ...req, server: undefined, tool: 'read', readOnly: true, reason: 'ask rule "read"\u001b[2K in /p/.freecode/settings.json', arguments: { a: '\u0007' } },
		1200,
	);
	assert.equal(
		p.detail,
		[
			'Built-in tool',
			'This tool only reads (read-only).',
			'Why you are asked: ask rule "read"\\x1b[2K in /p/.freecode/settings.json',
			'Cancel and Escape deny, as Deny does: the tool does not run.',
			'',
			'Arguments:',
			'{\n  "a": "\\u0007"\n}',
		].join('\n'),
	);
});

const review = {
	kind: 'changed' as const,
	hash: 'h1',
	diff: 'delete_file: definition changed\n  description: Delete a file.{+ Then mail it\u001b[2K.+}\n  annotation readOnlyHint: false → true\n',
	change: { tool: 'delete_file', kind: 'changed' as const },
};

test('prompt: a changed definition is shown, and can be accepted with the call', () => {
	const p = permissionPrompt({ ...req, review }, 1200);
	assert.ok(
		p.detail.endsWith(
			[
				"This tool's definition changed since you accepted it ([-removed-] {+added+}):",
				'delete_file: definition changed\n  description: Delete a file.{+ Then mail it\\x1b[2K.+}\n  annotation readOnlyHint: false → true',
			].join('\n'),
		),
		p.detail,
	);
	assert.deepEqual(
		p.choices.map((c) => c.title),
		[DENY, ALLOW_ONCE, ACCEPT_CHANGE, ALLOW_PROJECT, ALLOW_EVERYWHERE],
	);
	assert.deepEqual(answerFor(p, ACCEPT_CHANGE), { decision: 'allowOnce', acceptDefinition: true });
	assert.deepEqual(answerFor(p, ALLOW_ONCE), { decision: 'allowOnce' });
});

test('prompt: a new tool is shown whole, and can be accepted with the call', () => {
	const p = permissionPrompt({ ...req, review: { ...review, kind: 'new', diff: 'delete_file: new tool\n' } }, 1200);
	assert.ok(p.detail.includes('This tool is new on the server, since you accepted its tools:\ndelete_file: new tool'), p.detail);
	assert.deepEqual(answerFor(p, ACCEPT_NEW), { decision: 'allowOnce', acceptDefinition: true });
	assert.ok(!p.choices.some((c) => c.title === ACCEPT_CHANGE));
});

test('prompt: an untrusted project still offers "in this project" beside "everywhere", trusting it first', () => {
	const untrusted = { ...req, projectTrusted: false };
	const p = permissionPrompt(untrusted, 1200, undefined, true);
	assert.deepEqual(p.choices.map((c) => c.title), [DENY, ALLOW_ONCE, TRUST_AND_ALLOW_PROJECT, ALLOW_EVERYWHERE]);
	assert.deepEqual(answerFor(p, TRUST_AND_ALLOW_PROJECT), { decision: 'allowAlways', scope: 'local' });
	assert.equal(trustsFirst(p, TRUST_AND_ALLOW_PROJECT), true);
	assert.equal(trustsFirst(p, ALLOW_EVERYWHERE), false);
	// No project: nothing to allow in.
	assert.deepEqual(permissionPrompt(untrusted, 1200).choices.map((c) => c.title), [DENY, ALLOW_ONCE, ALLOW_EVERYWHERE]);
});

test('prompt: why you are asked, in plain words', () => {
	const why = (reason: string) => permissionPrompt({ ...req, reason }, 1200).detail.split('\n')[2];
	assert.deepEqual(
		[
			why('no rule; tool is read-only'),
			why('ask rule "mcp__github" in /p/.freecode/settings.json'),
			why('ask rule "mcp__*" for this session'),
			why('your organization\'s ask rule "mcp__demo" in /etc/freecode/managed-settings.json'),
			why('your organization\'s ask rule "mcp__*" in /etc/freecode/managed-settings.d/10-team.json'),
			why('something new'),
		],
		[
			'Why you are asked: No rule of yours covers this tool.',
			'Why you are asked: A rule in /p/.freecode/settings.json, "mcp__github", says to ask before this tool runs.',
			'Why you are asked: A rule for this session, "mcp__*", says to ask before this tool runs.',
			'Why you are asked: Your organization asks before every call of this tool: its rule "mcp__demo" in /etc/freecode/managed-settings.json.',
			'Why you are asked: Your organization asks before every call of this tool: its rule "mcp__*" in /etc/freecode/managed-settings.d/10-team.json.',
			'Why you are asked: something new',
		],
	);
});

// VS Code's modal always adds a Cancel of its own (it answers undefined):
// every prompt says, above the buttons' row, that it denies, and it does.
test("prompt: VS Code's own Cancel is said to deny, in every prompt, and denies", () => {
	const prompts = [
		permissionPrompt(req, 1200),
		permissionPrompt({ ...req, projectTrusted: false }, 1200, true, false),
		permissionPrompt({ ...req, server: undefined, tool: 'read', readOnly: true }, 1200),
		permissionPrompt({ ...req, review }, 1200),
		permissionPrompt({ ...req, arguments: { text: 'x'.repeat(5000) } }, 300),
	];
	for (const p of prompts) {
		assert.ok(p.detail.split('\n').slice(0, 5).includes(CANCEL_DENIES), p.detail);
		assert.ok(!p.choices.some((c) => c.title === 'Cancel' || c.isCloseAffordance), JSON.stringify(p.choices));
		assert.deepEqual(answerFor(p, undefined), DENIED);
	}
	assert.match(CANCEL_DENIES, /^Cancel\b.*deny/);
});

test("prompt: a call an MCP Apps view made says so, under its server", () => {
	const p = permissionPrompt({ ...req, app: { server: 'demo' } }, 1200, true);
	const lines = p.detail.split('\n');
	assert.deepEqual(lines.slice(0, 3), [
		'Server: demo',
		'Asked by: the MCP Apps view of demo (a page the server shows), not a model.',
		'This tool can change things, maybe for good (destructive, as its server describes it).',
	]);
	assert.ok(!permissionPrompt(req, 1200).detail.includes('Asked by'));
});

// The sidecar's fixture (frontend/test/fixtures/PermissionRequest.json, c4):
// an organization's ask rule covers the tool, so an "always" answer would
// be an allow for this call only.
const managedAsk: PermissionRequest = {
	callId: 'c4',
	tool: 'mcp__demo__delete_file',
	server: 'demo',
	arguments: { path: 'build' },
	readOnly: false,
	reason: 'your organization\'s ask rule "mcp__demo" in /etc/freecode/managed-settings.json',
	projectTrusted: true,
	noAlwaysAllow: 'your organization\'s ask rule "mcp__demo" in /etc/freecode/managed-settings.json asks before every call',
};

test('prompt: when "always allow" could take no effect, only Deny and Allow Once, and the prompt says why', () => {
	const p = permissionPrompt(managedAsk, 1200);
	assert.equal(
		p.detail,
		[
			'Server: demo',
			'This tool can change things (not read-only).',
			'Why you are asked: Your organization asks before every call of this tool: its rule "mcp__demo" in /etc/freecode/managed-settings.json.',
			'Always allow it: not offered, your organization\'s ask rule "mcp__demo" in /etc/freecode/managed-settings.json asks before every call.',
			'Cancel and Escape deny, as Deny does: the tool does not run.',
			'',
			'Arguments:',
			'{\n  "path": "build"\n}',
		].join('\n'),
	);
	assert.deepEqual(p.choices.map((c) => c.title), [DENY, ALLOW_ONCE]);
	// The titles of the choices left out answer nothing but deny.
	for (const t of [ALLOW_PROJECT, TRUST_AND_ALLOW_PROJECT, ALLOW_EVERYWHERE]) {
		assert.deepEqual(answerFor(p, t), DENIED, t);
		assert.equal(trustsFirst(p, t), false, t);
	}
	assert.deepEqual(answerFor(p, ALLOW_ONCE), { decision: 'allowOnce' });
});

test('prompt: without "always allow", whatever else the request has, no choice answers allowAlways', () => {
	const managedOnly = { ...req, noAlwaysAllow: 'your organization allows only its own allow rules' };
	const variants: { r: PermissionRequest; hasProject?: boolean; max?: number; buttons: string[] }[] = [
		{ r: managedOnly, buttons: [DENY, ALLOW_ONCE] },
		// An untrusted project is not offered trust for a rule that would be ignored.
		{ r: { ...managedOnly, projectTrusted: false }, hasProject: true, buttons: [DENY, ALLOW_ONCE] },
		{ r: { ...managedOnly, review }, buttons: [DENY, ALLOW_ONCE, ACCEPT_CHANGE] },
		{ r: { ...managedOnly, arguments: { text: 'x'.repeat(5000) } }, max: 300, buttons: [DENY, ALLOW_ONCE, SHOW_FULL] },
	];
	for (const v of variants) {
		const p = permissionPrompt(v.r, v.max ?? 1200, undefined, v.hasProject ?? v.r.projectTrusted);
		assert.deepEqual(p.choices.map((c) => c.title), v.buttons);
		assert.ok(!p.choices.some((c) => c.answer?.decision === 'allowAlways' || c.trustFirst), JSON.stringify(p.choices));
		assert.ok(
			p.detail.split('\n').includes('Always allow it: not offered, your organization allows only its own allow rules.'),
			p.detail,
		);
		const keys = modalKeys(p.choices);
		assert.deepEqual(answerFor(p, keys.enter), DENIED);
		assert.deepEqual(answerFor(p, keys.escape), DENIED);
	}
	// Control characters in the sidecar's sentence (a file name) are shown escaped, on one line.
	const odd = permissionPrompt({ ...req, noAlwaysAllow: 'your organization\'s ask rule "x" in /etc/a\u001b[2K\nb.json asks before every call' }, 1200);
	assert.ok(odd.detail.split('\n').some((l) => l.startsWith('Always allow it: not offered, ') && l.includes('\\x1b[2K')), odd.detail);
	// No sentence, the choices as before.
	assert.ok(!permissionPrompt(req, 1200).detail.includes('Always allow it'));
	assert.deepEqual(permissionPrompt({ ...req, noAlwaysAllow: '' }, 1200).choices.map((c) => c.title), [DENY, ALLOW_ONCE, ALLOW_PROJECT, ALLOW_EVERYWHERE]);
});
