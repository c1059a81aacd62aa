import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALWAYS_ALLOW, modalRow } from '../src/alwaysAllow';
import { ALLOW_EVERYWHERE, ALLOW_ONCE, ALLOW_PROJECT, DENY, permissionPrompt, SHOW_FULL, TRUST_AND_ALLOW_PROJECT } from '../../../frontend/src/permissionChoices';
import type { PermissionRequest } from '../../../frontend/src/protocol.gen';

const req = {
	callId: 'c1',
	tool: 'mcp__demo__delete_file',
	server: 'demo',
	arguments: { path: 'notes.txt' },
	readOnly: false,
	destructive: true,
	annotated: true,
	reason: 'no rule covers it',
	projectTrusted: false,
} as unknown as PermissionRequest;

test('permission modal: several "always" choices sit behind one button, in their order, each saying what it writes', () => {
	const p = permissionPrompt(req, 2000, true, true);
	const { row, always } = modalRow(p);
	assert.deepEqual(
		row.map((c) => c.title),
		[DENY, ALLOW_ONCE, ALWAYS_ALLOW],
	);
	assert.deepEqual(
		always.map((a) => a.label),
		[TRUST_AND_ALLOW_PROJECT, ALLOW_EVERYWHERE],
	);
	for (const a of always) assert.match(a.detail, /settings(\.local)?\.json/);
	// Deny stays first: the default button, which Enter picks.
	assert.equal(row[0].title, DENY);
	// With the project trusted: its own scope instead of trusting it.
	const trusted = modalRow(permissionPrompt({ ...req, projectTrusted: true } as PermissionRequest, 2000, true, true));
	assert.deepEqual(
		trusted.always.map((a) => a.label),
		[ALLOW_PROJECT, ALLOW_EVERYWHERE],
	);
});

test('permission modal: one "always" choice is a button of its own; Show Full Arguments stays', () => {
	const long = { ...req, arguments: { text: 'x'.repeat(5000) } } as unknown as PermissionRequest;
	const p = permissionPrompt(long, 100, true, false);
	const { row, always } = modalRow(p);
	assert.deepEqual(
		row.map((c) => c.title),
		[DENY, ALLOW_ONCE, ALLOW_EVERYWHERE, SHOW_FULL],
	);
	assert.deepEqual(always, []);
});

test('permission modal: no Always Allow… when the sidecar says "always" could take no effect (noAlwaysAllow)', () => {
	const org = { ...req, noAlwaysAllow: 'your organization allows only its own allow rules' } as PermissionRequest;
	for (const r of [org, { ...org, projectTrusted: true } as PermissionRequest]) {
		const { row, always } = modalRow(permissionPrompt(r, 2000, true, true));
		assert.deepEqual(
			row.map((c) => c.title),
			[DENY, ALLOW_ONCE],
		);
		assert.deepEqual(always, []);
	}
});
