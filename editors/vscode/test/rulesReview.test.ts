// The prompt a trusted project's loosened rules get (rulesReview.ts), and the
// session's part: the notification reaches the extension, and accepting
// sends the hash the user was shown.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { ServersModel } from '../../../frontend/src/model';
import type { RulesReview } from '../../../frontend/src/protocol.gen';
import { ACCEPT_RULES, acceptedRulesHash, KEEP, rulesDocument, rulesNotice, rulesPrompt } from '../src/rulesReview';
import { Session } from '../../../frontend/src/session';

const hash = '5d41402abc4b2a76b9719d911017c592ae1b6f6c0a4b3f1a2d6e0c8b9a7f3e21';

// The report: allow mcp__* written into settings.local.json, and a
// deny rule taken out of settings.json.
const review: RulesReview = {
	hash,
	files: [
		{ path: '/home/me/project/.freecode/settings.json', source: 'project', deny: ['mcp__github__delete_repo'], ask: ['mcp__github'] },
		{ path: '/home/me/project/.freecode/settings.local.json', source: 'local', allow: ['mcp__*'] },
	],
};

test('rulesNotice says what changed and that it waits; nothing when nothing awaits', () => {
	assert.equal(
		rulesNotice(review),
		"This project's permission rules changed since you accepted them (1 allow rule added, 1 deny rule removed, 1 ask rule removed): the change waits for your review.",
	);
	assert.equal(rulesNotice({ files: [] }), undefined);
	assert.equal(rulesNotice({ files: review.files }), undefined, 'no hash to accept by');
});

test('rulesDocument is a diff per file: + an allow rule added, - a deny or ask rule removed', () => {
	assert.equal(
		rulesDocument(review),
		[
			"# This project's permission rules, changed since you accepted them.",
			'# Until you accept, the new allow rules are ignored and the removed deny and ask rules are still enforced: ' +
				'a pull, an editor or a server of the project can write these files, and only you loosen your rules.',
			'',
			'--- /home/me/project/.freecode/settings.json (as you accepted it)',
			'+++ /home/me/project/.freecode/settings.json (now)',
			'- deny  mcp__github__delete_repo',
			'- ask   mcp__github',
			'',
			'--- /home/me/project/.freecode/settings.local.json (as you accepted it)',
			'+++ /home/me/project/.freecode/settings.local.json (now)',
			'+ allow mcp__*',
			'',
		].join('\n'),
	);
});

test('rulesDocument escapes what a path could hide', () => {
	const doc = rulesDocument({ hash, files: [{ path: '/p/\u202e.freecode/settings.local.json', source: 'local', allow: ['x'] }] });
	assert.ok(!doc.includes('\u202e'));
	assert.ok(doc.includes('/p/\\u202e.freecode'));
});

test('rulesPrompt: Keep first (what Enter picks), Accept sends the hash shown, nothing else accepts', () => {
	const p = rulesPrompt(review);
	assert.ok(p);
	assert.equal(p.message, 'Accept the changed permission rules of this project (1 allow rule added, 1 deny rule removed, 1 ask rule removed)?');
	assert.deepEqual(
		p.choices.map((c) => c.title),
		[KEEP, ACCEPT_RULES],
	);
	for (const line of [
		'/home/me/project/.freecode/settings.local.json:',
		'  + allow mcp__* (would apply)',
		'  - deny mcp__github__delete_repo (would no longer be enforced)',
		'  - ask mcp__github (would no longer ask)',
	]) {
		assert.ok(p.detail.split('\n').includes(line), `detail lacks ${JSON.stringify(line)}:\n${p.detail}`);
	}
	assert.equal(acceptedRulesHash(p, ACCEPT_RULES), hash);
	assert.equal(acceptedRulesHash(p, KEEP), undefined);
	assert.equal(acceptedRulesHash(p, undefined), undefined, 'Escape or the dialog closed');
	assert.equal(rulesPrompt({ files: [] }), undefined);
});

test('rulesPrompt lists at most 20 lines; the diff has the rest', () => {
	const allow = Array.from({ length: 30 }, (_, i) => `mcp__s${i}`);
	const p = rulesPrompt({ hash, files: [{ path: '/p/.freecode/settings.local.json', source: 'local', allow }] });
	assert.ok(p);
	assert.ok(p.detail.includes('… and 11 more lines: see the diff'), p.detail);
	assert.ok(!p.detail.includes('mcp__s29'));
});

test('session: rules/reviewNeeded reaches the extension; acceptRules sends trusted with the hash', async () => {
	const a = new PassThrough();
	const b = new PassThrough();
	const ext = createMessageConnection(new StreamMessageReader(a), new StreamMessageWriter(b));
	const peer = createMessageConnection(new StreamMessageReader(b), new StreamMessageWriter(a));
	const told: RulesReview[] = [];
	const warnings: string[] = [];
	const session = new Session(ext, new ServersModel(), {
		askPermission: async () => ({ decision: 'deny' }),
		rulesReview: (r) => told.push(r),
		warn: (m) => warnings.push(m),
	});
	session.listen();
	ext.listen();
	peer.listen();
	try {
		let got: unknown;
		peer.onRequest('freecode/project/trust', (p) => {
			got = p;
			return { projectTrusted: true };
		});
		await peer.sendNotification('freecode/rules/reviewNeeded', review);
		await peer.sendNotification('freecode/rules/reviewNeeded', { hash, files: [{ path: '/p', source: 'elsewhere' }] });
		await session.acceptRules(hash);
		assert.deepEqual(told, [review]);
		assert.match(warnings[0] ?? '', /^ignored a freecode\/rules\/reviewNeeded that does not fit the protocol: /);
		assert.deepEqual(got, { trusted: true, rulesHash: hash });
	} finally {
		ext.dispose();
		peer.dispose();
	}
});
