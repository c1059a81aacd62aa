import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
	ACCEPT,
	acceptConfirmation,
	ADOPT_TASK,
	adoptConfirmation,
	confirmed,
	DO_NOT_ACCEPT,
	DO_NOT_IMPORT,
	DO_NOT_TRUST,
	IMPORT,
	IMPORT_TO_KEYCHAIN,
	importConfirmation,
	KEEP_APPROVAL,
	LEAVE_TASK,
	REVOKE,
	revokeConfirmation,
	SIGN_OUT,
	signOutConfirmation,
	STAY_SIGNED_IN,
	TRUST,
	trustConfirmation,
	type Confirmation,
} from '../src/confirmations';
import type { ToolReview } from '../../../frontend/src/protocol.gen';

const review: ToolReview = {
	server: 'gh',
	tool: 'create_issue',
	id: 'mcp__gh__create_issue',
	kind: 'changed',
	hash: 'h1',
	diff: 'description: Creates an issue[-.-]{+ and emails everyone.+}\n',
	change: { tool: 'create_issue', kind: 'changed' },
};

const cases: { name: string; c: Confirmation; buttons: string[]; go: string }[] = [
	{ name: 'Trust Project', c: trustConfirmation(), buttons: [DO_NOT_TRUST, TRUST], go: TRUST },
	{ name: 'Accept Definition', c: acceptConfirmation(review), buttons: [DO_NOT_ACCEPT, ACCEPT], go: ACCEPT },
	{
		name: 'Import MCP Servers',
		c: importConfirmation('Claude Desktop', 'Dry run: 1 server\n+ imported (local)'),
		buttons: [DO_NOT_IMPORT, IMPORT],
		go: IMPORT,
	},
	{ name: 'Revoke Approval', c: revokeConfirmation('repo-tools'), buttons: [KEEP_APPROVAL, REVOKE], go: REVOKE },
	{ name: 'Sign Out', c: signOutConfirmation('linear'), buttons: [STAY_SIGNED_IN, SIGN_OUT], go: SIGN_OUT },
	{
		name: 'Adopt Task',
		c: adoptConfirmation({ server: 'demo', taskId: 't1', tool: 'long_build', callId: 'cli-1', status: 'working', createdAt: '', updatedAt: '' }),
		buttons: [LEAVE_TASK, ADOPT_TASK],
		go: ADOPT_TASK,
	},
];

for (const tc of cases) {
	test(`confirmation: ${tc.name}: Enter and Escape do nothing; only its own button goes ahead`, () => {
		assert.deepEqual(
			tc.c.buttons.map((b) => b.title),
			tc.buttons,
		);
		// VS Code's modal: Enter is the first button that is not a close
		// affordance; a close affordance would leave the row, making the
		// button after it the default. Escape, with no close affordance, is
		// VS Code's own Cancel, which answers undefined.
		assert.ok(
			tc.c.buttons.every((b) => !('isCloseAffordance' in b)),
			'no button is a close affordance',
		);
		assert.equal(confirmed(tc.c, tc.c.buttons[0].title), false, 'Enter does nothing');
		assert.equal(confirmed(tc.c, undefined), false, 'Escape does nothing');
		assert.equal(confirmed(tc.c, 'Something Else'), false);
		assert.equal(confirmed(tc.c, tc.go), true);
		assert.deepEqual(
			tc.c.buttons.filter((b) => b.confirm).map((b) => b.title),
			[tc.go],
		);
	});
}

test('confirmation: the words say what goes ahead, for whom', () => {
	assert.equal(trustConfirmation().message, 'Trust this project?');
	const a = acceptConfirmation(review);
	assert.equal(a.message, 'Accept the new definition of mcp__gh__create_issue?');
	assert.ok(a.detail.startsWith('description: Creates an issue[-.-]{+ and emails everyone.+}\n\nModels will be shown it'), a.detail);
	const i = importConfirmation('Cursor', 'Dry run: 1 server\n+ imported (local)');
	assert.deepEqual([i.message, i.detail], ['Import MCP servers from Cursor?', 'Dry run: 1 server\n+ imported (local)']);
	assert.equal(revokeConfirmation('repo-tools').message, 'Revoke your approval of "repo-tools"?');
	assert.equal(signOutConfirmation('linear').message, 'Sign out of "linear"?');
});

test('confirmation: a long change or preview is cut; a server name is one printable line', () => {
	const a = acceptConfirmation({ ...review, diff: 'x'.repeat(5000) });
	assert.ok(a.detail.length < 1400, `${a.detail.length} characters`);
	assert.ok(importConfirmation('VS Code', 'y'.repeat(10_000)).detail.length <= 4000);
	const r = revokeConfirmation('evil\nname\u001b[31m');
	assert.ok(!/[\n\u001b]/.test(r.message), JSON.stringify(r.message));
	assert.ok(!/[\n\u001b]/.test(signOutConfirmation('a\nb').detail));
	assert.equal(importConfirmation('Cursor', '+ x\u001b[2J (local)').detail, '+ x\\x1b[2J (local)');
});

test("import: the preview says what will be added in the dialog's words, not the CLI's dry run", () => {
	const c = importConfirmation('Claude Code', 'Would add servers from /tmp/c.json (Claude Code) to ~/.freecode/config.json:\n  + a (local)\n    command:   npx -y x\nDry run: 1 server would be added; nothing was written.');
	assert.ok(!c.detail.includes('Dry run'), c.detail);
	assert.match(c.detail, /\n1 server to add\. Nothing is written until you choose Import\.$/);
	assert.match(c.detail, /^Would add servers from/);
});

test('import: credentials written out in the file add a third way ahead, which keeps them in the keychain', () => {
	// `freecode mcp import claude-code c.json --dry-run`, as printed.
	const preview = [
		'1 value looks like a credential written out in the file: BRAVE_API_KEY of brave.',
		'Without --move-secrets they are copied as written; with it they go to the OS keychain (else ~/.freecode/auth) and the config holds ${secret:NAME} in their place.',
		'Would add servers from /tmp/c.json (Claude Code) to /tmp/cfg.json:',
		'  + brave (local)',
		'    env:       BRAVE_API_KEY=***',
		'Dry run: 1 server would be added; nothing was written.',
	].join('\n');
	const c = importConfirmation('Claude Code', preview);
	assert.deepEqual(
		c.buttons.map((b) => [b.title, b.confirm]),
		[
			[DO_NOT_IMPORT, false],
			[IMPORT, true],
			[IMPORT_TO_KEYCHAIN, true],
		],
	);
	assert.ok(!c.detail.includes('--move-secrets'), c.detail);
	assert.match(c.detail, /Import copies them as they are; Import, Credentials to Keychain keeps them in the OS keychain/);
	assert.equal(importConfirmation('Cursor', 'Dry run: 1 server\n+ imported (local)').buttons.length, 2);
});
