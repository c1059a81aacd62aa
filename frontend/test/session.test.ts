// Session's handling of message orders and malformed messages that the real
// sidecar (test/integration) cannot be made to produce on purpose. The other
// end is a vscode-jsonrpc connection over in-memory streams that the test
// drives message by message.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, test } from 'node:test';
import {
	CancellationTokenSource,
	createMessageConnection,
	StreamMessageReader,
	StreamMessageWriter,
	type MessageConnection,
} from 'vscode-jsonrpc/node';
import { ResponseError } from 'vscode-jsonrpc';
import type {
	ElicitationRequest,
	ElicitationResponse,
	PermissionResponse,
	SamplingRequest,
	SamplingResult,
	ServerStatus,
	ToolInfo,
} from '../src/protocol.gen';
import { Session } from '../src/session';
import { ServersModel } from '../src/model';
import { toolRow } from '../src/rows';

let ext: MessageConnection;
let peer: MessageConnection;
let model: ServersModel;
let warnings: string[];
let answer: () => Promise<PermissionResponse>;
let elicit: (req: ElicitationRequest) => Promise<ElicitationResponse>;
let sample: (req: SamplingRequest) => Promise<SamplingResult>;
let session: Session;
let reviews: unknown[];
let listening: { dispose(): void };

beforeEach(() => {
	const a = new PassThrough();
	const b = new PassThrough();
	ext = createMessageConnection(new StreamMessageReader(a), new StreamMessageWriter(b));
	peer = createMessageConnection(new StreamMessageReader(b), new StreamMessageWriter(a));
	model = new ServersModel();
	warnings = [];
	answer = async () => ({ decision: 'allowOnce' });
	reviews = [];
	elicit = async () => ({ action: 'decline' });
	sample = async () => {
		throw new Error('no model');
	};
	session = new Session(ext, model, {
		askPermission: () => answer(),
		askElicitation: (req) => elicit(req),
		askSampling: (req) => sample(req),
		warn: (m) => warnings.push(m),
		reviewNeeded: (r) => reviews.push(r),
	});
	listening = session.listen();
	ext.listen();
	peer.listen();
});

afterEach(() => {
	ext.dispose();
	peer.dispose();
});

const st = (name: string, state: ServerStatus['state'], toolCount = 0): ServerStatus => ({
	name,
	scope: 'user',
	type: 'local',
	state,
	toolCount,
});
const tool = (server: string, name: string): ToolInfo => ({
	id: `mcp__${server}__${name}`,
	server,
	name,
	description: '',
	readOnly: true,
	inputSchema: {},
});

/** deferred is a promise the test settles when it chooses. */
function deferred<T>() {
	let resolve!: (v: T) => void;
	const promise = new Promise<T>((r) => (resolve = r));
	return { promise, resolve };
}

/** changed resolves at the model's next change. */
function changed(): Promise<void> {
	return new Promise((resolve) => {
		const off = model.onDidChange(() => {
			off();
			resolve();
		});
	});
}

const request = {
	callId: 'c1',
	tool: 'mcp__demo__delete_file',
	server: 'demo',
	arguments: { path: 'x' },
	readOnly: false,
	reason: 'no rule; tool is not read-only',
	projectTrusted: false,
};

test('session: the permission answer goes back as the user gave it', async () => {
	answer = async () => ({ decision: 'allowAlways', scope: 'user' });
	assert.deepEqual(await peer.sendRequest('freecode/permission/request', request), { decision: 'allowAlways', scope: 'user' });
});

const denials: { name: string; params: unknown; answer: () => Promise<PermissionResponse>; warning: RegExp }[] = [
	{
		name: 'a request missing a field',
		params: { ...request, readOnly: undefined },
		answer: async () => ({ decision: 'allowOnce' }),
		warning: /^ignored a freecode\/permission\/request that does not fit the protocol: \$\.readOnly: missing/,
	},
	{
		name: 'a prompt that fails',
		params: request,
		answer: async () => {
			throw new Error('no window');
		},
		warning: /^permission prompt failed, answering deny: no window$/,
	},
	{
		name: 'an answer that is not one of the protocol',
		params: request,
		answer: async () => ({ decision: 'allowForever' }) as unknown as PermissionResponse,
		warning: /^the permission prompt answered \{"decision":"allowForever"\}, which is not in the protocol; answering deny$/,
	},
];

for (const tc of denials) {
	test(`session: ${tc.name} is a denial`, async () => {
		answer = tc.answer;
		assert.deepEqual(await peer.sendRequest('freecode/permission/request', tc.params), { decision: 'deny' });
		assert.match(warnings.join('\n'), tc.warning);
	});
}

test('session: a status that arrives while freecode/servers is answered is not lost', async () => {
	const servers = deferred<{ servers: ServerStatus[] }>();
	peer.onRequest('freecode/servers', () => servers.promise);
	peer.onRequest('freecode/tools', () => ({ tools: [] }));
	const refreshed = session.refresh();
	// The sidecar sends "connected" after it computed the (older) list.
	const seen = changed();
	await peer.sendNotification('freecode/servers/status', st('demo', 'connected', 3));
	await seen;
	servers.resolve({ servers: [st('demo', 'connecting')] });
	await refreshed;
	assert.equal(model.server('demo')?.state, 'connected');
});

test('session: tools/changed during a refresh makes one more refresh, not one each', async () => {
	let calls = 0;
	const first = deferred<{ servers: ServerStatus[] }>();
	peer.onRequest('freecode/servers', async () => (++calls === 1 ? first.promise : { servers: [st('a', 'connected', 1)] }));
	peer.onRequest('freecode/tools', () => ({ tools: calls === 1 ? [] : [tool('a', 'x')] }));
	const refreshed = session.refresh();
	const hashes = { anthropic: 'h1', openai: 'h2' };
	for (let i = 0; i < 3; i++) await peer.sendNotification('freecode/tools/changed', { hashes, reason: 'connected' });
	// A round trip after the notifications: they have been handled once it answers.
	peer.onRequest('ping', () => 'pong');
	await ext.sendRequest('ping');
	first.resolve({ servers: [] });
	await refreshed;
	assert.equal(calls, 2);
	assert.deepEqual(
		model.toolsOf('a').map((t) => t.id),
		['mcp__a__x'],
	);
});

test('session: a notification that does not fit the protocol is ignored and reported', async () => {
	model.setServers([st('demo', 'connected', 1)]);
	await peer.sendNotification('freecode/servers/status', { name: 'demo', state: 'asleep' });
	peer.onRequest('ping', () => 'pong');
	await ext.sendRequest('ping');
	assert.equal(model.server('demo')?.state, 'connected');
	assert.match(warnings[0], /^ignored a freecode\/servers\/status that does not fit the protocol: /);
});

test('session: reviewNeeded is told to the extension and reads the tools again, with their marks', async () => {
	peer.onRequest('freecode/servers', () => ({ servers: [st('a', 'connected', 1)] }));
	peer.onRequest('freecode/tools', () => ({ tools: [{ ...tool('a', 'x'), readOnly: false, definitionChanged: true }] }));
	const seen = changed();
	const params = {
		server: 'a',
		reviews: [
			{
				server: 'a',
				tool: 'x',
				id: 'mcp__a__x',
				kind: 'changed',
				hash: 'h',
				diff: 'x: definition changed\n',
				change: { tool: 'x', kind: 'changed', annotations: [{ hint: 'readOnlyHint', old: false, new: true }] },
			},
		],
	};
	await peer.sendNotification('freecode/tools/reviewNeeded', params);
	await seen;
	await session.refresh();
	assert.deepEqual(reviews, [params]);
	assert.deepEqual(
		model.toolsOf('a').map((t) => [t.id, toolRow(t).description, toolRow(t).review]),
		[['mcp__a__x', 'destructive · definition changed', 'changed']],
	);
});

test('session: a reviewNeeded that does not fit the protocol is ignored and reported', async () => {
	await peer.sendNotification('freecode/tools/reviewNeeded', { server: 'a', reviews: [{ tool: 'x' }] });
	peer.onRequest('ping', () => 'pong');
	await ext.sendRequest('ping');
	assert.deepEqual(reviews, []);
	assert.match(warnings[0], /^ignored a freecode\/tools\/reviewNeeded that does not fit the protocol: /);
});

test('session: review sends freecode/tools/review and returns its reviews', async () => {
	let got: unknown;
	peer.onRequest('freecode/tools/review', (p) => {
		got = p;
		return { reviews: [] };
	});
	assert.deepEqual(await session.review({ server: 'a', tool: 'x', action: 'accept', hash: 'h' }), []);
	assert.deepEqual(got, { server: 'a', tool: 'x', action: 'accept', hash: 'h' });
});

test('session: execute sends its params by name, with a token or without', async () => {
	const got: unknown[] = [];
	peer.onRequest('freecode/tools/execute', (params: unknown) => {
		got.push(params);
		return { results: [] };
	});
	const calls = [{ callId: 'c1', tool: 'mcp__demo__read_file', arguments: { path: 'x' } }];
	await session.execute(calls);
	await session.execute(calls, new CancellationTokenSource().token);
	assert.deepEqual(got, [{ calls }, { calls }]);
});

test('session: once it stops listening, a read in flight is not repeated, nor its failure reported', async () => {
	let reads = 0;
	const gate = deferred<void>();
	peer.onRequest('freecode/servers', async () => {
		reads++;
		await gate.promise;
		throw new Error('the frontend sent shutdown; only exit is taken');
	});
	peer.onRequest('freecode/tools', () => ({ tools: [] }));
	const refreshed = session.refresh();
	// The servers stopping change the tools while the read is out: without
	// the stop, that would make one more read.
	await peer.sendNotification('freecode/tools/changed', { hashes: { anthropic: 'a', openai: 'o' }, reason: 'stopped' });
	peer.onRequest('ping', () => 'pong');
	await ext.sendRequest('ping');
	listening.dispose();
	gate.resolve();
	await refreshed;
	await session.refresh();
	assert.equal(reads, 1);
	assert.deepEqual(warnings, []);
});

const form: ElicitationRequest = { server: 'gh', callId: 'c1', mode: 'form', message: 'who?', requestedSchema: { type: 'object' } };

test('session: an elicitation goes to the form and its answer back; a bad answer or request is a decline', async () => {
	const asked: ElicitationRequest[] = [];
	elicit = async (req) => {
		asked.push(req);
		return { action: 'accept', content: { name: 'Ada' } };
	};
	assert.deepEqual(await peer.sendRequest('freecode/elicitation/request', form), { action: 'accept', content: { name: 'Ada' } });
	assert.deepEqual(asked, [form]);

	elicit = async () => ({ action: 'maybe' }) as unknown as ElicitationResponse;
	assert.deepEqual(await peer.sendRequest('freecode/elicitation/request', form), { action: 'decline' });
	assert.match(warnings.join('\n'), /the form answered \{"action":"maybe"\}, which is not in the protocol; declining/);
	assert.deepEqual(await peer.sendRequest('freecode/elicitation/request', { ...form, mode: 'sms' }), { action: 'decline' });
	assert.equal(asked.length, 1);
});

const sampling: SamplingRequest = { server: 'gh', callId: 'c2', params: { messages: [], maxTokens: 5 } };

/** refusal returns the JSON-RPC error the peer gets for a sampling request. */
async function refusal(params: unknown): Promise<{ code: number; message: string }> {
	try {
		await peer.sendRequest('freecode/sampling/request', params);
	} catch (e) {
		const re = e as ResponseError<unknown>;
		return { code: re.code, message: re.message };
	}
	assert.fail('the sampling request was answered');
}

test('session: a sampling result goes back as it is; every refusal is a JSON-RPC error with code -1', async () => {
	const result: SamplingResult = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm', stopReason: 'endTurn' };
	sample = async () => result;
	assert.deepEqual(await peer.sendRequest('freecode/sampling/request', sampling), result);

	sample = async () => {
		throw new ResponseError(-1, 'sampling refused: the user denied it');
	};
	assert.deepEqual(await refusal(sampling), { code: -1, message: 'sampling refused: the user denied it' });
	sample = async () => {
		throw new Error('no model');
	};
	assert.deepEqual(await refusal(sampling), { code: -1, message: 'sampling refused: no model' });
	sample = async () => ({ role: 'assistant', model: 'm' }) as unknown as SamplingResult;
	assert.deepEqual(await refusal(sampling), { code: -1, message: 'sampling refused: the answer does not fit the protocol' });
	assert.deepEqual(await refusal({ server: 'gh' }), { code: -1, message: 'sampling refused: the request does not fit the protocol' });
});

test("session: a change of a server's resources or prompts reads that server's list; a stopped server has none", async () => {
	model.setServers([st('everything', 'connected'), st('off', 'stopped')]);
	const asked: unknown[] = [];
	peer.onRequest('freecode/resources', (params: unknown) => {
		asked.push(params);
		return { resources: [{ server: 'everything', uri: 'demo://a', name: 'a' }] };
	});
	peer.onRequest('freecode/prompts', (params: unknown) => {
		asked.push(params);
		return { prompts: [{ server: 'everything', name: 'greet' }] };
	});
	let seen = changed();
	await peer.sendNotification('freecode/resources/changed', { server: 'everything', reason: 'connected' });
	await seen;
	seen = changed();
	await peer.sendNotification('freecode/prompts/changed', { server: 'everything', reason: 'listChanged' });
	await seen;
	assert.deepEqual(asked, [{ server: 'everything' }, { server: 'everything' }]);
	assert.deepEqual(
		[...model.resourcesOf('everything').map((r) => r.uri), ...model.promptsOf('everything').map((pr) => pr.name)],
		['demo://a', 'greet'],
	);

	seen = changed();
	await peer.sendNotification('freecode/resources/changed', { server: 'off', reason: 'stopped' });
	await seen;
	assert.equal(asked.length, 2);
});

test('session: a list read overtaken by a later one is dropped', async () => {
	model.setServers([st('everything', 'connected')]);
	const first = deferred<unknown>();
	let n = 0;
	peer.onRequest('freecode/resources', async () => {
		if (++n === 1) return first.promise;
		return { resources: [] };
	});
	await peer.sendNotification('freecode/resources/changed', { server: 'everything', reason: 'connected' });
	const seen = changed();
	await peer.sendNotification('freecode/resources/changed', { server: 'everything', reason: 'listChanged' });
	await seen;
	first.resolve({ resources: [{ server: 'everything', uri: 'demo://old', name: 'old' }] });
	peer.onRequest('ping', () => 'pong');
	await ext.sendRequest('ping');
	assert.deepEqual(model.resourcesOf('everything'), []);
});

test('session: a refresh reads the tasks; tasks/changed updates one; cancelTask sends server and taskId', async () => {
	const working = { server: 'demo', taskId: 't1', tool: 'long_build', callId: 'c1', status: 'working', createdAt: '2026-05-01T10:00:00Z', updatedAt: '2026-05-01T10:00:01Z' } as const;
	peer.onRequest('freecode/servers', () => ({ servers: [st('demo', 'connected', 1)] }));
	peer.onRequest('freecode/tools', () => ({ tools: [] }));
	peer.onRequest('freecode/tasks', () => ({ tasks: [working] }));
	let cancelled: unknown;
	peer.onRequest('freecode/tasks/cancel', (params) => {
		cancelled = params;
		return { ...working, status: 'cancelled', updatedAt: '2026-05-01T10:00:05Z' };
	});
	await session.refresh();
	assert.deepEqual(model.tasks().map((t) => t.status), ['working']);
	const seen = changed();
	await peer.sendNotification('freecode/tasks/changed', { ...working, status: 'input_required', updatedAt: '2026-05-01T10:00:02Z' });
	await seen;
	assert.equal(model.tasks()[0].status, 'input_required');
	const t = await session.cancelTask('demo', 't1');
	assert.deepEqual(cancelled, { server: 'demo', taskId: 't1' });
	assert.equal(t.status, 'cancelled');
	assert.equal(model.tasks()[0].status, 'cancelled');
	// One that does not fit is reported and changes nothing.
	await peer.sendNotification('freecode/tasks/changed', { ...working, status: 'asleep', updatedAt: '2026-05-01T10:00:09Z' });
	peer.onRequest('ping', () => 'pong');
	await ext.sendRequest('ping');
	assert.equal(model.tasks()[0].status, 'cancelled');
	assert.match(warnings.at(-1) ?? '', /freecode\/tasks\/changed that does not fit the protocol/);
});

test("session: another frontend's task comes without mine; adoptTask sends server and taskId and the task comes back ours, whole", async () => {
	const theirs = { server: 'demo', taskId: 't2', tool: 'long_build', callId: 'cli-1', status: 'working', createdAt: '2026-05-01T10:00:00Z', updatedAt: '2026-05-01T10:00:01Z' } as const;
	peer.onRequest('freecode/servers', () => ({ servers: [st('demo', 'connected', 1)] }));
	peer.onRequest('freecode/tools', () => ({ tools: [] }));
	peer.onRequest('freecode/tasks', () => ({ tasks: [theirs] }));
	let adopted: unknown;
	peer.onRequest('freecode/tasks/adopt', (params) => {
		adopted = params;
		return { ...theirs, statusMessage: 'step 2/4', mine: true };
	});
	await session.refresh();
	assert.equal(model.tasks()[0].mine, undefined);
	const t = await session.adoptTask('demo', 't2');
	assert.deepEqual(adopted, { server: 'demo', taskId: 't2' });
	assert.equal(t.mine, true);
	assert.deepEqual([model.tasks()[0].mine, model.tasks()[0].statusMessage], [true, 'step 2/4']);
	// Another frontend adopts it back: the sidecar says so, and it is not ours any more.
	const seen = changed();
	await peer.sendNotification('freecode/tasks/changed', theirs);
	await seen;
	assert.deepEqual([model.tasks()[0].mine, model.tasks()[0].statusMessage], [undefined, undefined]);
});

test('session: setSecret sends name and value by name; the status of the server it started, sent before the answer, is in the model by then', async () => {
	let got: unknown;
	peer.onRequest('freecode/secrets/set', async (params) => {
		got = params;
		// The statuses of the servers started go before the answer.
		await peer.sendNotification('freecode/servers/status', { ...st('github', 'connected', 3) });
		return { where: 'the OS keychain', started: ['github'] };
	});
	model.setServers([{ ...st('github', 'failed'), lastErrorKind: 'secret', missingSecrets: ['GITHUB_TOKEN'] }]);
	assert.deepEqual(await session.setSecret('GITHUB_TOKEN', 's3cr3t'), { where: 'the OS keychain', started: ['github'] });
	assert.deepEqual(got, { name: 'GITHUB_TOKEN', value: 's3cr3t' });
	assert.equal(model.server('github')?.state, 'connected');
	// An answer outside the protocol is an error, not a half-read result.
	peer.onRequest('freecode/secrets/set', () => ({ where: 'the OS keychain' }));
	await assert.rejects(session.setSecret('X', 'y'), /outside the protocol/);
});
