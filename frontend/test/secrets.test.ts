// What a server that misses a secret says, and Set Secret's steps: every
// value asked before any is sent, a cancel sending nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SecretSetResult, ServerStatus } from '../src/protocol.gen';
import { missingSecrets, needsSecretRowWords, needsSecretTip, needsSecretWords, placeWords, secretPrompt, secretsSetWords, secretValueProblem, setSecrets } from '../src/secrets';

const failed = (missing: string[], over: Partial<ServerStatus> = {}): ServerStatus => ({
	name: 'github',
	scope: 'user',
	type: 'local',
	state: 'failed',
	toolCount: 0,
	lastErrorKind: 'secret',
	lastError: `secret ${missing[0]} is not set (\`freecode secret set ${missing[0]}\`)`,
	missingSecrets: missing,
	...over,
});

test('secrets: only a failed server of kind secret misses secrets, and says which in plain words', () => {
	assert.deepEqual(missingSecrets(failed(['GITHUB_TOKEN'])), ['GITHUB_TOKEN']);
	assert.deepEqual(missingSecrets(failed(['A'], { state: 'connecting' })), []);
	assert.deepEqual(missingSecrets(failed(['A'], { lastErrorKind: 'exited' })), []);
	assert.equal(needsSecretWords(failed(['GITHUB_TOKEN'])), 'needs secret GITHUB_TOKEN');
	assert.equal(needsSecretWords(failed(['A', 'B'])), 'needs secrets A, B');
	assert.equal(needsSecretWords(failed(['A'], { state: 'connected' })), '');
	// Names the row would cut beside its Set Secret… button are in its
	// tooltip only: "vs-notes needs secret notes-token" was cut.
	assert.equal(needsSecretRowWords(failed(['GITHUB_TOKEN'], { name: 'gh' })), 'needs secret GITHUB_TOKEN');
	assert.equal(needsSecretRowWords(failed(['notes-token'], { name: 'vs-notes' })), 'needs a secret');
	assert.equal(needsSecretRowWords(failed(['GITHUB_TOKEN', 'SLACK_TOKEN'])), 'needs 2 secrets');
	assert.equal(needsSecretRowWords(failed(['A'], { state: 'connected' })), '');
	assert.equal(
		needsSecretTip(failed(['GITHUB_TOKEN'])),
		'Needs the secret GITHUB_TOKEN, which is not set: Set Secret… asks for its value and keeps it in your OS keychain (where there is none, in a file only you can read), never in a config file.',
	);
	assert.match(needsSecretTip(failed(['A', 'B'])), /^Needs the secrets A, B, which are not set: Set Secret… asks for their values and keeps them in your OS keychain/);
	// A name is the sidecar's: made printable like any of its words.
	assert.equal(needsSecretWords(failed(['A\u202eB'])), 'needs secret A\\u202eB');
});

test('secrets: the prompt says whose secret and where it goes; an empty value is refused', () => {
	assert.equal(secretPrompt('GITHUB_TOKEN', 'github'), 'Value of the secret GITHUB_TOKEN for server github (kept in your OS keychain, never in a file of your project)');
	assert.ok(secretValueProblem(''));
	assert.equal(secretValueProblem(' x '), undefined);
});

function sender(answers: Record<string, SecretSetResult | Error>) {
	const sent: [string, string][] = [];
	return {
		sent,
		setSecret: async (name: string, value: string): Promise<SecretSetResult> => {
			sent.push([name, value]);
			const a = answers[name];
			if (a instanceof Error) throw a;
			return a;
		},
	};
}

test('secrets: every value is asked, then each sent; the servers started are told once', async () => {
	const s = sender({ A: { where: 'the OS keychain', started: [] }, B: { where: 'the OS keychain', started: ['github', 'gh2'] } });
	const asked: string[] = [];
	const r = await setSecrets(s, 'github', ['A', 'B'], async (name, prompt) => {
		asked.push(prompt);
		// Nothing goes before the user answered every input.
		assert.equal(s.sent.length, 0);
		return `value of ${name}`;
	});
	assert.deepEqual(asked, [secretPrompt('A', 'github'), secretPrompt('B', 'github')]);
	assert.deepEqual(s.sent, [
		['A', 'value of A'],
		['B', 'value of B'],
	]);
	assert.deepEqual(r, { names: ['A', 'B'], where: 'the OS keychain', started: ['github', 'gh2'] });
	assert.equal(secretsSetWords(r!), 'Secrets A, B saved in the OS keychain; github, gh2 started');
	assert.equal(secretsSetWords({ names: ['GITHUB_TOKEN'], where: 'the OS keychain', started: ['github'] }), 'Secret GITHUB_TOKEN saved in the OS keychain; github started');
	assert.equal(secretsSetWords({ names: ['T'], where: '/home/u/.freecode/auth/tokens.json', started: [] }), 'Secret T saved in tokens.json (only you can read it)');
	assert.equal(placeWords('C:\\Users\\u\\.freecode\\auth\\tokens.json'), 'tokens.json (only you can read it)');
});

test('secrets: a cancel sends nothing; a refused request names its secret', async () => {
	const s = sender({ A: { where: 'the OS keychain', started: [] }, B: new Error('the keychain is locked') });
	assert.equal(await setSecrets(s, 'github', ['A', 'B'], async (name) => (name === 'B' ? undefined : 'v')), undefined);
	assert.equal(await setSecrets(s, 'github', ['A'], async () => ''), undefined);
	assert.equal(s.sent.length, 0);
	await assert.rejects(setSecrets(s, 'github', ['A', 'B'], async () => 'v'), /^Error: setting the secret B: the keychain is locked$/);
	assert.deepEqual(s.sent.map(([n]) => n), ['A', 'B']);
});
