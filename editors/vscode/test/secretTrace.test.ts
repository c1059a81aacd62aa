// A secret's value never reaches the trace channel: vscode-jsonrpc's own
// tracer (what the LanguageClient traces with, verbose, in its text and
// JSON formats) writes through the mask as the client writes to its trace
// channel, while the request goes through the mask's middleware as the
// client's sendRequest calls it.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, test } from 'node:test';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, Trace, TraceFormat, type MessageConnection } from 'vscode-jsonrpc/node';
import { SecretMask } from '../src/secretTrace';

/** A LogOutputChannel's shape, as far as the client uses it, keeping its lines. */
class Channel {
	readonly lines: string[] = [];
	readonly logLevel = 1;
	trace(m: string): void {
		this.lines.push(m);
	}
	appendLine(m: string): void {
		this.lines.push(m);
	}
	get text(): string {
		return this.lines.join('\n');
	}
}

let ext: MessageConnection;
let peer: MessageConnection;
let got: unknown[];

beforeEach(() => {
	const a = new PassThrough();
	const b = new PassThrough();
	ext = createMessageConnection(new StreamMessageReader(a), new StreamMessageWriter(b));
	peer = createMessageConnection(new StreamMessageReader(b), new StreamMessageWriter(a));
	got = [];
	peer.onRequest('freecode/secrets/set', (p: unknown) => {
		got.push(p);
		return { where: 'the OS keychain', started: ['github'] };
	});
	peer.onRequest('freecode/tools/execute', (p: unknown) => ({ echo: p }));
	ext.listen();
	peer.listen();
});

afterEach(() => {
	ext.dispose();
	peer.dispose();
});

/** traceTo traces ext into channel verbosely, writing as the LanguageClient's tracer writes (getLogMessage, traceObject). */
async function traceTo(channel: Channel, format: TraceFormat): Promise<void> {
	await ext.trace(
		Trace.Verbose,
		{ log: (m: string | object, data?: string) => channel.trace(typeof m === 'string' ? (data != null ? `${m}\n${data}` : m) : JSON.stringify(m)) },
		{ sendNotification: false, traceFormat: format },
	);
}

for (const format of [TraceFormat.Text, TraceFormat.JSON]) {
	test(`secret trace: the value reaches the sidecar, the ${format} trace has *** for it and everything else as it is`, async () => {
		const mask = new SecretMask();
		const raw = new Channel();
		const channel = mask.channel(raw);
		await traceTo(channel, format);
		// A quote and a backslash, which JSON writes escaped, and a non-ASCII letter.
		const value = 'ghp_"s3cr\\t-wört';
		const send = (method: string, params: object) => mask.sendRequest(method, params, undefined, (t, p) => ext.sendRequest(t, p));
		const [r, other] = await Promise.all([
			send('freecode/secrets/set', { name: 'GITHUB_TOKEN', value }),
			// Another request in flight meanwhile is traced whole.
			send('freecode/tools/execute', { calls: [{ callId: 'c1', tool: 'mcp__demo__echo', arguments: { text: 'hello' } }] }),
		]);
		assert.deepEqual(got, [{ name: 'GITHUB_TOKEN', value }]);
		assert.deepEqual(r, { where: 'the OS keychain', started: ['github'] });
		assert.ok(other);
		const text = raw.text;
		assert.match(text, /freecode\/secrets\/set/);
		assert.match(text, /GITHUB_TOKEN/);
		assert.match(text, /\*\*\*/);
		assert.match(text, /mcp__demo__echo/);
		assert.match(text, /hello/);
		for (const part of [value, JSON.stringify(value).slice(1, -1), 'ghp_', 's3cr', 'wört']) assert.ok(!text.includes(part), `the trace holds ${part}:\n${text}`);
		// The request answered, nothing is hidden any more.
		channel.appendLine(`unrelated: ${value}`);
		assert.ok(raw.text.endsWith(value));
	});
}

test('secret trace: the channel is the same channel otherwise; other requests pass through untouched', async () => {
	const mask = new SecretMask();
	const raw = new Channel();
	const channel = mask.channel(raw);
	assert.equal(channel.logLevel, 1);
	channel.trace('a line');
	assert.deepEqual(raw.lines, ['a line']);
	let seen: unknown[] = [];
	const answer = await mask.sendRequest('freecode/tools/execute', { value: 'not a secret' }, undefined, async (t, p, k) => {
		seen = [t, p, k];
		channel.trace('while: not a secret');
		return 42;
	});
	assert.equal(answer, 42);
	assert.deepEqual(seen, ['freecode/tools/execute', { value: 'not a secret' }, undefined]);
	assert.equal(raw.lines[1], 'while: not a secret');
	// A request that fails unhides its value too.
	await assert.rejects(
		mask.sendRequest('freecode/secrets/set', { name: 'X', value: 'v4lue' }, undefined, async () => {
			channel.trace('failing: v4lue');
			throw new Error('refused');
		}),
		/refused/,
	);
	channel.trace('after: v4lue');
	assert.deepEqual(raw.lines.slice(2), ['failing: ***', 'after: v4lue']);
});
