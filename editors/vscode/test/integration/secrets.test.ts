// Set Secret… against the real sidecar: a server whose entry names a secret
// that is not set fails at once saying which, its row says what it needs
// and offers Set Secret; the value sent (through the extension's mask, as
// the LanguageClient's middleware sends it) starts the server, while the
// verbose JSON-RPC trace of that very connection shows *** for it.
//
// Needs FREECODE_BIN, as sidecar.test.ts.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { Trace, TraceFormat } from 'vscode-jsonrpc/node';
import { ServersModel } from '../../../../frontend/src/model';
import { missingSecrets, secretsSetWords, setSecrets } from '../../../../frontend/src/secrets';
import { Session, type Connection } from '../../../../frontend/src/session';
import { SecretMask } from '../../src/secretTrace';
import { serverNode } from '../../src/views/serversTree';
import { startSidecar, until as waitFor, writeConfig, type Sidecar } from './harness';

const bin = process.env.FREECODE_BIN;
const skip = bin ? false : 'FREECODE_BIN is not set (make vscode-integration sets it to the built binaries)';

const value = 'integration-s3cret-"value"-9d2e';
let tmp: string;
let sidecar: Sidecar;
const model = new ServersModel();
const warnings: string[] = [];
const traced: string[] = [];
const mask = new SecretMask();

function until(what: string, ok: () => boolean): Promise<void> {
	return waitFor(model, what, ok, () => sidecar.stderr());
}

before(async () => {
	if (skip) return;
	tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'freecode-ext-secrets-'));
	const workspace = path.join(tmp, 'workspace');
	fs.mkdirSync(workspace);
	const configPath = path.join(tmp, 'home', '.freecode', 'config.json');
	writeConfig(configPath, [{ name: 'vault', type: 'local', command: [path.join(bin!, 'demo-server'), '--name', 'vault'], env: { VAULT_TOKEN: '${secret:VAULT_TOKEN}' } }]);
	sidecar = await startSidecar({
		bin: bin!,
		tmp,
		workspace,
		configPath,
		env: { FREECODE_TOKEN_STORE: 'file' },
		model,
		hooks: { askPermission: async () => ({ decision: 'deny' }), warn: (m) => warnings.push(m) },
	});
	// Traced as the LanguageClient traces into its channel, through the mask.
	const channel = mask.channel({ trace: (m: string) => void traced.push(m) });
	await sidecar.conn.trace(
		Trace.Verbose,
		{ log: (m: string | object, data?: string) => channel.trace(typeof m === 'string' ? (data != null ? `${m}\n${data}` : m) : JSON.stringify(m)) },
		{ sendNotification: false, traceFormat: TraceFormat.Text },
	);
});

after(async () => {
	if (skip) return;
	await sidecar.stop();
	fs.rmSync(tmp, { recursive: true, force: true });
	assert.deepEqual(warnings, [], 'the sidecar sent something that does not fit the protocol');
});

test('a server whose secret is not set fails at once, says what it needs, and Set Secret starts it; the trace shows ***', { skip }, async () => {
	await until('vault failed for its secret', () => model.server('vault')?.lastErrorKind === 'secret');
	const failed = model.server('vault')!;
	assert.equal(failed.state, 'failed');
	assert.deepEqual(missingSecrets(failed), ['VAULT_TOKEN']);
	const node = serverNode(failed, []);
	assert.equal(node.description, 'needs secret VAULT_TOKEN');
	assert.match(node.contextValue, /\bcan:setSecret\b/);

	// The session's request goes through the mask's middleware, as the
	// LanguageClient sends it in the extension.
	const conn = sidecar.conn;
	const viaClient: Connection = {
		sendRequest: (method, params, token) => mask.sendRequest(method, params, token, (m, p, t) => (t ? conn.sendRequest(m, p, t) : conn.sendRequest(m, p))),
		onNotification: (m, h) => conn.onNotification(m, h),
		onRequest: (m, h) => conn.onRequest(m, h),
	};
	const asked: string[] = [];
	const r = await setSecrets(new Session(viaClient, model, { askPermission: async () => ({ decision: 'deny' }) }), 'vault', missingSecrets(failed), async (_name, prompt) => {
		asked.push(prompt);
		return value;
	});
	assert.deepEqual(asked, ['Value of the secret VAULT_TOKEN for server vault (kept in your OS keychain, never in a file of your project)']);
	const file = path.join(tmp, 'home', '.freecode', 'auth', 'tokens.json');
	assert.deepEqual(r, { names: ['VAULT_TOKEN'], where: file, started: ['vault'] });
	assert.equal(secretsSetWords(r!), 'Secret VAULT_TOKEN saved in tokens.json (only you can read it); vault started');
	await until('vault connected', () => model.server('vault')?.state === 'connected');
	assert.equal((fs.statSync(file).mode & 0o777).toString(8), '600');

	const trace = traced.join('\n');
	assert.match(trace, /Sending request 'freecode\/secrets\/set - \(\d+\)'\.\nParams: \{\n {4}"name": "VAULT_TOKEN",\n {4}"value": "\*\*\*"\n\}/);
	assert.match(trace, /Received response 'freecode\/secrets\/set/);
	for (const s of [value, JSON.stringify(value).slice(1, -1), 's3cret']) {
		assert.ok(!trace.includes(s), `the trace holds ${s}`);
		assert.ok(!sidecar.stderr().includes(s), `the sidecar's log holds ${s}`);
	}
});
