// The sidecar's start, stop and restart when they overlap. The clients are
// fakes that keep vscode-languageclient's rules (a client that is starting
// cannot be stopped, one that is stopping cannot be started) and finish
// their starts and stops only when the test says, so each test makes the
// order that once went wrong happen every time: a later start finishing
// before an earlier stop. LanguageClient itself needs VS Code to run.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SidecarLifecycle, type ClientState, type LifecycleOptions, type SidecarClient } from '../src/lifecycle';
import { ServersModel } from '../../../frontend/src/model';
import { RestartBudget } from '../src/restartPolicy';
import type { Connection } from '../../../frontend/src/session';
import type { Settings } from '../src/settings';

type FakeState = 'initial' | 'starting' | 'running' | 'stopping' | 'stopped';

/** Pending is a start or a stop a fake client has begun and not finished. */
interface Pending {
	kind: 'start' | 'stop';
	client: FakeClient;
	finish(): void;
}

/** Sidecars are every fake client the lifecycle built, and what they are waiting to finish. */
class Sidecars {
	readonly clients: FakeClient[] = [];
	readonly pending: Pending[] = [];
	/** failStarts makes the next starts fail, as a sidecar that exits at once. */
	failStarts = 0;

	newClient = (): SidecarClient => {
		const c = new FakeClient(this, this.clients.length);
		this.clients.push(c);
		return c;
	};

	running(): FakeClient[] {
		return this.clients.filter((c) => c.state === 'running');
	}
}

class FakeClient implements SidecarClient {
	state: FakeState = 'initial';
	/** The methods the session sent through this client. */
	readonly sent: string[] = [];
	private readonly listeners = new Set<(s: ClientState) => void>();
	readonly connection: Connection;

	constructor(
		private readonly all: Sidecars,
		readonly n: number,
	) {
		this.connection = {
			sendRequest: async <R>(method: string): Promise<R> => {
				this.sent.push(method);
				if (this.state !== 'running') throw new Error(`sidecar ${this.n} is ${this.state}`);
				const answers: Record<string, unknown> = {
					'freecode/servers': { servers: [] },
					'freecode/tools': { tools: [] },
					'freecode/tasks': { tasks: [] },
					'freecode/project': { projectTrusted: false, configPath: '/home/me/.freecode/config.json', settingsPaths: { user: '/home/me/.freecode/settings.json' } },
				};
				return (answers[method] ?? {}) as R;
			},
			onNotification: () => ({ dispose() {} }),
			onRequest: () => ({ dispose() {} }),
		};
	}

	private set(s: FakeState): void {
		this.state = s;
		const told: ClientState | undefined = s === 'starting' ? 'starting' : s === 'running' ? 'running' : s === 'stopped' ? 'stopped' : undefined;
		if (told) for (const fn of this.listeners) fn(told);
	}

	start(): Promise<void> {
		if (this.state === 'stopping') return Promise.reject(new Error('Client is currently stopping. Can only restart a full stopped client'));
		if (this.state !== 'initial' && this.state !== 'stopped') return Promise.reject(new Error(`sidecar ${this.n} started twice`));
		this.set('starting');
		const fail = this.all.failStarts > 0;
		if (fail) this.all.failStarts--;
		return new Promise((resolve, reject) => {
			this.all.pending.push({
				kind: 'start',
				client: this,
				finish: () => {
					if (fail) {
						this.set('stopped');
						reject(new Error(`sidecar ${this.n} exited during initialize`));
						return;
					}
					this.set('running');
					resolve();
				},
			});
		});
	}

	stop(): Promise<void> {
		if (this.state === 'initial' || this.state === 'stopped') return Promise.resolve();
		if (this.state !== 'running') {
			return Promise.reject(new Error(`Client is not running and can't be stopped. It's current state is: ${this.state}`));
		}
		this.set('stopping');
		return new Promise((resolve) => {
			this.all.pending.push({
				kind: 'stop',
				client: this,
				finish: () => {
					this.set('stopped');
					resolve();
				},
			});
		});
	}

	onDidChangeState(fn: (s: ClientState) => void) {
		this.listeners.add(fn);
		return { dispose: () => this.listeners.delete(fn) };
	}
}

const settings: Settings = {
	serverPath: '/extension/bin/freecode-serve',
	serverPathFromSetting: false,
	cliPath: 'freecode',
	trace: 'off',
	argumentChars: 1200,
	problems: [],
};

function setup(over: Partial<LifecycleOptions> = {}) {
	const sidecars = new Sidecars();
	const log: string[] = [];
	const states: string[] = [];
	const life = new SidecarLifecycle({
		model: new ServersModel(),
		hooks: { askPermission: async () => ({ decision: 'deny' }) },
		settings: () => settings,
		exists: () => true,
		newClient: sidecars.newClient,
		log: { info: (m) => log.push(`info ${m}`), warn: (m) => log.push(`warn ${m}`), error: (m) => log.push(`error ${m}`) },
		...over,
	});
	life.onDidChangeState((s) => states.push(s));
	return { sidecars, life, log, states };
}

/** turn lets every promise continuation that can run, run: one trip round the event loop. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Order picks which pending start or stop finishes next. */
type Order = (pending: readonly Pending[]) => number;
/** startsFirst finishes any start before any stop: a later operation's start overtakes an earlier one's stop. */
const startsFirst: Order = (p) => {
	const i = p.findIndex((x) => x.kind === 'start');
	return i >= 0 ? i : 0;
};
const inOrder: Order = () => 0;
const newestFirst: Order = (p) => p.length - 1;

/**
 * settle finishes the fakes' starts and stops one at a time, in the given
 * order, until every operation in ops has resolved; at most 50 of them.
 */
async function settle(s: Sidecars, order: Order, ...ops: Promise<void>[]): Promise<void> {
	let done = false;
	const all = Promise.all(ops).finally(() => (done = true));
	for (let i = 0; i < 50 && !done; i++) {
		await turn();
		if (done || s.pending.length === 0) continue;
		const [p] = s.pending.splice(order(s.pending), 1);
		p.finish();
	}
	assert.ok(done, `the operations did not finish; pending: ${s.pending.map((p) => `${p.kind} ${p.client.n}`).join(', ')}`);
	await all;
}

/**
 * consistent checks what a user can rely on after any mix of operations:
 * running with exactly one sidecar, whose connection the session speaks
 * through, or not running with none.
 */
async function consistent(life: SidecarLifecycle, s: Sidecars): Promise<void> {
	const running = s.running().map((c) => c.n);
	const halfway = s.clients.filter((c) => c.state === 'starting' || c.state === 'stopping').map((c) => c.n);
	assert.deepEqual(halfway, [], 'no sidecar is left half started or half stopped');
	if (life.state !== 'running') {
		assert.deepEqual(running, [], `the state is ${life.state}, yet sidecars ${running.join(', ')} run`);
		assert.equal(life.session, undefined);
		return;
	}
	assert.equal(running.length, 1, `running, on sidecars [${running.join(', ')}]`);
	const session = life.session;
	assert.ok(session, 'running, with a session');
	await session.project();
	assert.ok(s.clients[running[0]].sent.includes('freecode/project'), 'the session speaks to the sidecar that runs');
}

test('lifecycle: start, then stop', async () => {
	const { sidecars, life, states } = setup();
	await settle(sidecars, inOrder, life.start());
	assert.equal(life.state, 'running');
	await consistent(life, sidecars);
	await settle(sidecars, inOrder, life.stop());
	assert.equal(life.state, 'stopped');
	await consistent(life, sidecars);
	assert.deepEqual(states, ['starting', 'running', 'stopped']);
});

for (const [name, order] of [
	['a later start finishing first', startsFirst],
	['each finishing in turn', inOrder],
	['the newest finishing first', newestFirst],
] as const) {
	test(`lifecycle: two overlapping restarts end running on one sidecar (${name})`, async () => {
		const { sidecars, life } = setup();
		await settle(sidecars, inOrder, life.start());
		await settle(sidecars, order, life.restart(), life.restart());
		await consistent(life, sidecars);
		assert.equal(life.state, 'running');
		// One restart after the other: each stopped the sidecar before it.
		assert.deepEqual(
			sidecars.clients.map((c) => c.state),
			['stopped', 'stopped', 'running'],
		);
	});

	test(`lifecycle: a stop during a start ends stopped, with no sidecar left running (${name})`, async () => {
		const { sidecars, life, log } = setup();
		const started = life.start();
		await turn();
		const stopped = life.stop();
		await settle(sidecars, order, started, stopped);
		await consistent(life, sidecars);
		assert.equal(life.state, 'stopped');
		assert.deepEqual(
			log.filter((l) => l.startsWith('warn')),
			[],
			'nothing went wrong stopping it',
		);
	});

	test(`lifecycle: a restart during a stop, and a stop during that restart (${name})`, async () => {
		const { sidecars, life } = setup();
		await settle(sidecars, inOrder, life.start());
		await settle(sidecars, order, life.stop(), life.restart(), life.stop());
		await consistent(life, sidecars);
		assert.equal(life.state, 'stopped');
	});
}

test('lifecycle: a start that fails holds up nothing after it', async () => {
	const { sidecars, life, log } = setup();
	sidecars.failStarts = 1;
	await settle(sidecars, inOrder, life.start());
	assert.equal(life.state, 'failed');
	assert.ok(log.includes('error the sidecar did not start: sidecar 0 exited during initialize'), log.join('\n'));
	await settle(sidecars, inOrder, life.restart());
	assert.equal(life.state, 'running');
	await consistent(life, sidecars);
});

test('lifecycle: a missing binary is said, and no client is built', async () => {
	const { sidecars, life, log } = setup({
		settings: () => ({ ...settings, serverPath: '/nowhere/freecode-serve', serverPathFromSetting: true }),
		exists: () => false,
	});
	await life.start();
	assert.equal(life.state, 'missing');
	assert.deepEqual(log, ['error freecode.serverPath is /nowhere/freecode-serve, and there is no file there.']);
	assert.equal(sidecars.clients.length, 0);
});

test('lifecycle: crashes restart the sidecar until the budget is spent, then the state is failed', async () => {
	// The clock stands still: every crash is within the window.
	const { sidecars, life } = setup({ budget: new RestartBudget(5, 3 * 60 * 1000, () => 0) });
	await settle(sidecars, inOrder, life.start());
	const answers: boolean[] = [];
	for (let i = 0; i <= life.budget.max; i++) answers.push(life.crashed());
	assert.deepEqual(answers, [...Array(life.budget.max).fill(true), false]);
	assert.equal(life.state, 'failed');
	// The user's restart forgets them.
	await settle(sidecars, inOrder, life.restart());
	assert.equal(life.state, 'running');
	assert.equal(life.crashed(), true);
});
