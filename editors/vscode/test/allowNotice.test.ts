import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowMessage, allowNotice, allowStep, OPEN_FILE, shortPath, UNDO, type AllowStep, type AllowUI, type Where } from '../src/allowNotice';
import type { PermissionScope, RemoveAllowResult } from '../../../frontend/src/protocol.gen';

const where: Where = {
	root: '/home/me/project',
	settingsPaths: { user: '/home/me/.freecode/settings.json', local: '/home/me/project/.freecode/settings.local.json' },
	home: '/home/me',
};
const trustAndAllow: AllowStep = { rule: 'mcp__demo__delete_file', scope: 'local', trusted: true };

/** fakeUI picks picks in turn, and records what was shown and done. */
function fakeUI(picks: (string | undefined)[], result: RemoveAllowResult = { path: where.settingsPaths!.local!, removed: true }) {
	const seen = {
		shown: [] as { message: string; buttons: string[] }[],
		errors: [] as string[],
		opened: [] as string[],
		calls: [] as string[],
	};
	const ui: AllowUI = {
		showInfo: async (message, ...buttons) => {
			seen.shown.push({ message, buttons });
			return picks.shift();
		},
		showError: (m) => void seen.errors.push(m),
		openFile: (p) => void seen.opened.push(p),
		removeAllow: async (rule: string, scope: PermissionScope) => {
			seen.calls.push(`removeAllow ${rule} ${scope}`);
			return result;
		},
		untrust: async () => void seen.calls.push('untrust'),
	};
	return { ui, seen };
}

test('always allow: the notice says the trust, the rule and the file, with Undo first', async () => {
	const { ui, seen } = fakeUI([undefined]);
	await allowNotice(trustAndAllow, where, ui);
	assert.deepEqual(seen.shown, [
		{
			message:
				'Trusted this project and added the allow rule "mcp__demo__delete_file" to .freecode/settings.local.json: mcp__demo__delete_file now runs without asking in this project, for models and MCP Apps alike.',
			buttons: [UNDO, OPEN_FILE],
		},
	]);
	assert.deepEqual(seen.calls, [], 'closing the notice undoes nothing');
});

test('always allow: Undo takes the rule back, then the trust given in the same step, and says so', async () => {
	const { ui, seen } = fakeUI([UNDO]);
	await allowNotice(trustAndAllow, where, ui);
	assert.deepEqual(seen.calls, ['removeAllow mcp__demo__delete_file local', 'untrust']);
	assert.equal(
		seen.shown[1].message,
		'Removed the allow rule "mcp__demo__delete_file" from .freecode/settings.local.json, and this project is no longer trusted: mcp__demo__delete_file asks again.',
	);
	assert.deepEqual(seen.errors, []);
});

test('always allow: in a trusted project, or everywhere, Undo leaves the trust alone', async () => {
	const local = fakeUI([UNDO]);
	await allowNotice({ ...trustAndAllow, trusted: false }, where, local.ui);
	assert.ok(local.seen.shown[0].message.startsWith('Added the allow rule "mcp__demo__delete_file" to .freecode/settings.local.json: '), local.seen.shown[0].message);
	assert.deepEqual(local.seen.calls, ['removeAllow mcp__demo__delete_file local']);

	const user = fakeUI([UNDO], { path: where.settingsPaths!.user, removed: false });
	await allowNotice({ rule: 'mcp__gh__create_issue', scope: 'user', trusted: false }, where, user.ui);
	assert.equal(
		user.seen.shown[0].message,
		'Added the allow rule "mcp__gh__create_issue" to ~/.freecode/settings.json: mcp__gh__create_issue now runs without asking in every project, for models and MCP Apps alike.',
	);
	assert.deepEqual(user.seen.calls, ['removeAllow mcp__gh__create_issue user']);
	assert.equal(
		user.seen.shown[1].message,
		'The allow rule "mcp__gh__create_issue" was not in ~/.freecode/settings.json; its allow for this session is gone: mcp__gh__create_issue asks again.',
	);
});

test('always allow: Open Rules File opens it; a failed Undo says so and keeps the trust', async () => {
	const open = fakeUI([OPEN_FILE]);
	await allowNotice(trustAndAllow, where, open.ui);
	assert.deepEqual(open.seen.opened, [where.settingsPaths!.local]);
	assert.deepEqual(open.seen.calls, []);

	const { ui, seen } = fakeUI([UNDO]);
	ui.removeAllow = async () => {
		throw new Error('the sidecar is not running');
	};
	await allowNotice(trustAndAllow, where, ui);
	assert.deepEqual(seen.errors, ['Taking back the allow rule "mcp__demo__delete_file" failed: the sidecar is not running']);
	assert.deepEqual(seen.calls, [], 'the trust stays while the rule does');
});

test('always allow: only an allowAlways answer is a step; no project means the user file', () => {
	assert.equal(allowStep('t', { decision: 'allowOnce' }, false), undefined);
	assert.deepEqual(allowStep('t', { decision: 'allowAlways', scope: 'local' }, true), { rule: 't', scope: 'local', trusted: true });
	assert.deepEqual(allowStep('t', { decision: 'allowAlways' }, false), { rule: 't', scope: 'user', trusted: false });
	const noProject: Where = { settingsPaths: { user: '/home/me/.freecode/settings.json' }, home: '/home/me' };
	assert.ok(allowMessage({ rule: 't', scope: 'local', trusted: false }, noProject).includes('to ~/.freecode/settings.json: t now runs without asking in every project'));
	assert.equal(shortPath('/elsewhere/settings.json', where), '/elsewhere/settings.json');
	assert.ok(!allowMessage({ rule: 'x\u001b[2J', scope: 'user', trusted: false }, where).includes('\u001b'));
});
