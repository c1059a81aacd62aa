import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppBridge, callToolResult, classify, errors, MAX_CALLS_IN_FLIGHT, type AppHost, type CallToolResult, type Message } from '../src/appBridge';
import type { ReadResourceResult } from '../../../frontend/src/protocol.gen';

// A host that records what the bridge asks of it; calls wait for release.
class Host implements AppHost {
	calls: { name: string; args: Record<string, unknown>; release: (r: CallToolResult) => void }[] = [];
	reads: string[] = [];
	sizes: { width?: number; height?: number }[] = [];
	logs: string[] = [];
	callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
		return new Promise((release) => this.calls.push({ name, args, release }));
	}
	async readResource(uri: string): Promise<ReadResourceResult> {
		this.reads.push(uri);
		if (uri === 'ui://demo/missing') throw new Error('no such resource');
		return { contents: [{ uri, text: 'x' }] };
	}
	resize(size: { width?: number; height?: number }): void {
		this.sizes.push(size);
	}
	log(level: string, text: string): void {
		this.logs.push(`${level}: ${text}`);
	}
	links: string[] = [];
	async openLink(url: string): Promise<boolean> {
		this.links.push(url);
		return !url.includes('refused');
	}
}

function setup() {
	const host = new Host();
	const sent: Message[] = [];
	const bridge = new AppBridge(host, (m) => sent.push(m), {
		hostInfo: { name: 'test host', version: '1' },
		hostCapabilities: { serverTools: {} },
		hostContext: { theme: 'dark' },
		toolInput: { path: 'README.md' },
	});
	return { host, sent, bridge };
}

const init = { jsonrpc: '2.0', id: 1, method: 'ui/initialize', params: { protocolVersion: '2026-01-26', appInfo: { name: 'v', version: '1' }, appCapabilities: {} } };
const initialized = { jsonrpc: '2.0', method: 'ui/notifications/initialized' };

test('app bridge: ui/initialize is answered with the host context; input and result wait for initialized', async () => {
	const { sent, bridge } = setup();
	bridge.toolResult({ content: [{ type: 'text', text: 'done' }], isError: false });
	assert.deepEqual(sent, [], 'nothing is sent to a view before it initialized');
	await bridge.receive(init);
	assert.deepEqual(sent, [
		{ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2026-01-26', hostInfo: { name: 'test host', version: '1' }, hostCapabilities: { serverTools: {} }, hostContext: { theme: 'dark' } } },
	]);
	assert.equal(bridge.initialized, false);
	await bridge.receive(initialized);
	assert.equal(bridge.initialized, true);
	assert.deepEqual(sent.slice(1), [
		{ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: { path: 'README.md' } } },
		{ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: { content: [{ type: 'text', text: 'done' }], isError: false } },
	]);
	// A second handshake is refused, a second initialized ignored.
	await bridge.receive({ ...init, id: 2 });
	await bridge.receive(initialized);
	assert.equal(sent.length, 4);
	assert.deepEqual(sent[3], { jsonrpc: '2.0', id: 2, error: { code: errors.invalidRequest, message: 'ui/initialize was sent already' } });
});

test('app bridge: nothing but ping and ui/initialize before the handshake', async () => {
	const { host, sent, bridge } = setup();
	await bridge.receive({ jsonrpc: '2.0', id: 'p', method: 'ping' });
	await bridge.receive({ jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'delete_file', arguments: {} } });
	assert.deepEqual(sent, [
		{ jsonrpc: '2.0', id: 'p', result: {} },
		{ jsonrpc: '2.0', id: 'c', error: { code: errors.refused, message: 'tools/call before ui/initialize' } },
	]);
	assert.equal(host.calls.length, 0);
});

test('app bridge: tools/call goes to the host by name and its result back; bad params never reach it', async () => {
	const { host, sent, bridge } = setup();
	await bridge.receive(init);
	await bridge.receive(initialized);
	sent.length = 0;
	const pending = bridge.receive({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'delete_file', arguments: { path: 'a.txt' } } });
	assert.deepEqual(host.calls.map((c) => [c.name, c.args]), [['delete_file', { path: 'a.txt' }]]);
	host.calls[0].release({ content: [{ type: 'text', text: 'denied' }], isError: true });
	await pending;
	assert.deepEqual(sent, [{ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'denied' }], isError: true } }]);

	sent.length = 0;
	await bridge.receive({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { arguments: {} } });
	await bridge.receive({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'x', arguments: [1] } });
	assert.deepEqual(sent.map((m) => ('error' in m ? m.error.code : 0)), [errors.invalidParams, errors.invalidParams]);
	assert.equal(host.calls.length, 1);
});

test('app bridge: at most MAX_CALLS_IN_FLIGHT calls run at once; the rest are refused, not queued', async () => {
	const { host, sent, bridge } = setup();
	await bridge.receive(init);
	await bridge.receive(initialized);
	sent.length = 0;
	const running = [];
	for (let i = 0; i < MAX_CALLS_IN_FLIGHT + 1; i++) running.push(bridge.receive({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 't' } }));
	assert.equal(host.calls.length, MAX_CALLS_IN_FLIGHT);
	assert.equal(sent.length, 1);
	assert.ok('error' in sent[0] && sent[0].error.code === errors.refused && sent[0].id === MAX_CALLS_IN_FLIGHT);
	host.calls.forEach((c) => c.release({ content: [] }));
	await Promise.all(running);
	// One ended: another may start.
	void bridge.receive({ jsonrpc: '2.0', id: 'again', method: 'tools/call', params: { name: 't' } });
	assert.equal(host.calls.length, MAX_CALLS_IN_FLIGHT + 1);
});

test('app bridge: resources/read, size changes, logs, display mode, and what the host does not offer', async () => {
	const { host, sent, bridge } = setup();
	await bridge.receive(init);
	await bridge.receive(initialized);
	sent.length = 0;
	await bridge.receive({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'ui://demo/other.html' } });
	await bridge.receive({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'ui://demo/missing' } });
	await bridge.receive({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: {} });
	await bridge.receive({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { width: 300.4, height: 1e9 } });
	await bridge.receive({ jsonrpc: '2.0', method: 'ui/notifications/size-changed', params: { width: 'wide', height: -1 } });
	await bridge.receive({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', data: { n: 1 } } });
	await bridge.receive({ jsonrpc: '2.0', id: 4, method: 'ui/request-display-mode', params: { mode: 'fullscreen' } });
	await bridge.receive({ jsonrpc: '2.0', id: 5, method: 'ui/message', params: { role: 'user', content: [] } });
	await bridge.receive({ jsonrpc: '2.0', id: 6, method: 'sampling/createMessage', params: {} });
	assert.deepEqual(host.reads, ['ui://demo/other.html', 'ui://demo/missing']);
	assert.deepEqual(host.sizes, [{ width: 301, height: 20000 }]);
	assert.deepEqual(host.logs, ['warning: {"n":1}']);
	assert.deepEqual(sent, [
		{ jsonrpc: '2.0', id: 1, result: { contents: [{ uri: 'ui://demo/other.html', text: 'x' }] } },
		{ jsonrpc: '2.0', id: 2, error: { code: errors.internal, message: 'no such resource' } },
		{ jsonrpc: '2.0', id: 3, error: { code: errors.invalidParams, message: 'resources/read needs uri, a string' } },
		{ jsonrpc: '2.0', id: 4, result: { mode: 'inline' } },
		{ jsonrpc: '2.0', id: 5, error: { code: errors.methodNotFound, message: 'ui/message is not offered by this host' } },
		{ jsonrpc: '2.0', id: 6, error: { code: errors.methodNotFound, message: 'sampling/createMessage is not offered by this host' } },
	]);
});

test('app bridge: classify tells requests, notifications and responses apart and says what is wrong', () => {
	assert.deepEqual(classify({ jsonrpc: '2.0', id: 1, method: 'm' }), { kind: 'request', id: 1, method: 'm', params: {} });
	assert.deepEqual(classify({ jsonrpc: '2.0', method: 'n', params: { a: 1 } }), { kind: 'notification', method: 'n', params: { a: 1 } });
	assert.deepEqual(classify({ jsonrpc: '2.0', id: 'h', result: {} }), { kind: 'response', id: 'h', result: {} });
	assert.deepEqual(classify({ jsonrpc: '2.0', id: 'h', error: { code: 1, message: 'x' } }), { kind: 'response', id: 'h', error: { code: 1, message: 'x' } });
	for (const [raw, why] of [
		['text', 'a message is a JSON-RPC object'],
		[[1], 'a message is a JSON-RPC object'],
		[{ id: 1, method: 'm' }, 'jsonrpc must be "2.0"'],
		[{ jsonrpc: '2.0', id: 1, method: 5 }, 'method must be a string'],
		[{ jsonrpc: '2.0', id: 1, method: 'm', params: [1] }, 'params must be an object'],
		[{ jsonrpc: '2.0', id: { x: 1 }, method: 'm' }, 'id must be a string or a number'],
		[{ jsonrpc: '2.0', result: {} }, 'a response needs the id of a request'],
		[{ jsonrpc: '2.0', id: 1, error: 'bad' }, 'error must be { code, message }'],
		[{ jsonrpc: '2.0', id: 1 }, 'neither a request, a notification nor a response'],
	] as const) {
		const c = classify(raw);
		assert.equal(c.kind, 'invalid', JSON.stringify(raw));
		assert.equal((c as { message: string }).message, why);
	}
});

test('app bridge: a broken request is told why; a broken notification is dropped', async () => {
	const { sent, bridge } = setup();
	await bridge.receive({ jsonrpc: '1.0', id: 3, method: 'ping' });
	await bridge.receive({ jsonrpc: '2.0', method: 'x', params: 'no' });
	assert.deepEqual(sent, [{ jsonrpc: '2.0', id: 3, error: { code: errors.invalidRequest, message: 'jsonrpc must be "2.0"' } }]);
});

test('app bridge: teardown asks an initialized view and settles on its answer; a closed bridge says nothing', async () => {
	const { sent, bridge } = setup();
	await bridge.receive(init);
	await bridge.receive(initialized);
	sent.length = 0;
	let settled = false;
	const done = bridge.teardown('replaced').then(() => (settled = true));
	assert.equal(sent.length, 1);
	const req = sent[0] as { id: string; method: string; params: unknown };
	assert.equal(req.method, 'ui/resource-teardown');
	assert.deepEqual(req.params, { reason: 'replaced' });
	await Promise.resolve();
	assert.equal(settled, false);
	await bridge.receive({ jsonrpc: '2.0', id: req.id, result: {} });
	await done;
	assert.equal(settled, true);
	await bridge.receive({ jsonrpc: '2.0', id: 'p', method: 'ping' });
	bridge.toolResult({ content: [] });
	assert.equal(sent.length, 1, 'a torn-down view is neither answered nor told');
});

test('app bridge: callToolResult passes a denial on as the tool error it is', () => {
	assert.deepEqual(
		callToolResult({ callId: 'c', content: [{ type: 'text', text: 'the user denied it' }], isError: true, decision: 'denied', durationMs: 1 }),
		{ content: [{ type: 'text', text: 'the user denied it' }], isError: true },
	);
	assert.deepEqual(
		callToolResult({ callId: 'c', content: [], structuredContent: { n: 1 }, isError: false, decision: 'allowed', durationMs: 1 }),
		{ content: [], structuredContent: { n: 1 }, isError: false },
	);
});

test('app bridge: ui/open-link opens http(s) links through the host, and nothing else', async () => {
	const { host, sent, bridge } = setup();
	await bridge.receive(init);
	await bridge.receive(initialized);
	sent.length = 0;
	await bridge.receive({ jsonrpc: '2.0', id: 5, method: 'ui/open-link', params: { url: 'https://modelcontextprotocol.io/' } });
	await bridge.receive({ jsonrpc: '2.0', id: 6, method: 'ui/open-link', params: { url: 'https://example.com/refused' } });
	for (const url of ['file:///etc/passwd', 'command:workbench.action.terminal.new', 'javascript:alert(1)', 'vscode://settings']) {
		await bridge.receive({ jsonrpc: '2.0', id: url, method: 'ui/open-link', params: { url } });
	}
	await bridge.receive({ jsonrpc: '2.0', id: 7, method: 'ui/open-link', params: { url: 'not a url' } });
	await bridge.receive({ jsonrpc: '2.0', id: 8, method: 'ui/open-link', params: {} });
	assert.deepEqual(host.links, ['https://modelcontextprotocol.io/', 'https://example.com/refused'], 'only the http(s) links reach the host');
	assert.deepEqual(sent[0], { jsonrpc: '2.0', id: 5, result: {} });
	assert.deepEqual(sent[1], { jsonrpc: '2.0', id: 6, result: { isError: true } });
	for (const m of sent.slice(2)) assert.equal((m as { error?: { code: number } }).error?.code, errors.invalidParams, JSON.stringify(m));
	assert.match((sent[2] as { error: { message: string } }).error.message, /opens http and https links, not file:/);
});

test('app bridge: a context change goes into ui/initialize before the handshake and is notified after it', async () => {
	const { sent, bridge } = setup();
	bridge.setContext({ theme: 'light', styles: { variables: { '--color-text-primary': '#111' } } });
	await bridge.receive(init);
	const ctx = (sent[0] as { result: { hostContext: Record<string, unknown> } }).result.hostContext;
	assert.deepEqual(ctx, { theme: 'light', styles: { variables: { '--color-text-primary': '#111' } } });
	// Answered but not yet initialized: the change is held with the rest.
	bridge.setContext({ theme: 'dark' });
	assert.equal(sent.length, 1);
	await bridge.receive(initialized);
	assert.deepEqual(sent.at(-1), { jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'dark' } });
	bridge.setContext({ theme: 'light' });
	assert.deepEqual(sent.at(-1), { jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'light' } });
});
