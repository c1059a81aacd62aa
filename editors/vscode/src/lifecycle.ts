// Starting, stopping and restarting the sidecar, one operation at a time.
// Each waits until the one before it has finished: two restarts that
// overlap (a path setting changed while the user clicked Restart Sidecar)
// would otherwise interleave, and the first one's stop could finish after
// the second one's start, leaving the state `stopped` with a sidecar
// running. A stop during a start waits for the start: vscode-languageclient
// refuses to stop a client that is still starting, which would leave that
// sidecar running with nothing holding it. client.ts gives this a
// LanguageClient for each start; the tests give it fakes.
// Pure: no `vscode` import.

import type { ServersModel } from '../../../frontend/src/model';
import { RestartBudget } from './restartPolicy';
import { Session, type Connection, type Disposable, type Hooks } from '../../../frontend/src/session';
import type { Settings } from './settings';
import type { SidecarState } from '../../../frontend/src/statusText';

/** ClientState is what the lifecycle reads of a client's own state. */
export type ClientState = 'starting' | 'running' | 'stopped';

/** SidecarClient is one sidecar process and the connection to it: in VS Code, a LanguageClient. */
export interface SidecarClient {
	/** connection is what the session speaks through. */
	readonly connection: Connection;
	/** start spawns the sidecar and initializes it. */
	start(): Promise<void>;
	/** stop sends shutdown and exit, killing the sidecar if it has not gone after timeoutMs. */
	stop(timeoutMs: number): Promise<void>;
	/** onDidChangeState tells of every state the client goes through, a restart after a crash included. */
	onDidChangeState(fn: (s: ClientState) => void): Disposable;
}

/** Log is where the lifecycle says what it does: the "FreeCode Sidecar" output channel. */
export interface Log {
	info(message: string): void;
	warn(message: string): void;
	error(message: string): void;
}

export interface LifecycleOptions {
	model: ServersModel;
	hooks: Hooks;
	settings(): Settings;
	/** exists says whether there is a file at path: the sidecar's binary. */
	exists(path: string): boolean;
	/** newClient builds, but does not start, a client for the sidecar the settings name. */
	newClient(s: Settings): SidecarClient;
	log: Log;
	budget?: RestartBudget;
}

/** How long stop waits for shutdown/exit before the client kills the sidecar. */
export const stopTimeoutMs = 5000;

/** SidecarLifecycle owns the sidecar's client and the Session on top of it. */
export class SidecarLifecycle {
	private client?: SidecarClient;
	private current?: Session;
	private listening?: Disposable;
	private stateValue: SidecarState = 'stopped';
	private readonly listeners = new Set<(s: SidecarState) => void>();
	/** The crashes that count towards giving up; a restart the user asks for forgets them. */
	readonly budget: RestartBudget;
	// The last operation queued: the next one starts when it has settled, so
	// start, stop and restart never interleave (vscode-go's language server
	// restarts take a promise mutex alike). It never rejects.
	private queue: Promise<void> = Promise.resolve();

	constructor(private readonly o: LifecycleOptions) {
		this.budget = o.budget ?? new RestartBudget();
	}

	get state(): SidecarState {
		return this.stateValue;
	}

	/** session is the live session, when the sidecar runs. */
	get session(): Session | undefined {
		return this.stateValue === 'running' ? this.current : undefined;
	}

	/** onDidChangeState registers fn to run on every SidecarState change; the result unregisters it. */
	onDidChangeState(fn: (s: SidecarState) => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	private setState(s: SidecarState): void {
		if (this.stateValue === s) return;
		this.stateValue = s;
		for (const fn of this.listeners) fn(s);
	}

	/** serial runs op once every operation queued before it has settled. */
	private serial(op: () => Promise<void>): Promise<void> {
		const run = this.queue.then(op);
		this.queue = run.catch(() => {});
		return run;
	}

	/** start spawns the sidecar, unless it runs already or its binary is missing (then the state says so). */
	start(): Promise<void> {
		return this.serial(() => this.startNow());
	}

	/** stop shuts the sidecar down (shutdown, exit), killing it if it does not go in time. */
	stop(): Promise<void> {
		return this.serial(() => this.stopNow());
	}

	/** restart is the user's restart: it also forgets earlier crashes. */
	restart(): Promise<void> {
		return this.serial(async () => {
			this.budget.reset();
			await this.stopNow();
			await this.startNow();
		});
	}

	/**
	 * crashed is the client's word that the sidecar exited on its own, and
	 * says whether to restart it: not after RestartBudget.max crashes within
	 * its window, when the state becomes failed.
	 */
	crashed(): boolean {
		const b = this.budget;
		if (b.crashed()) {
			this.o.log.warn(`the sidecar exited; restarting it (${b.recent} of ${b.max} restarts in ${b.windowMs / 60000} minutes)`);
			return true;
		}
		this.o.log.error(`the sidecar exited ${b.recent} times within ${b.windowMs / 60000} minutes; not restarting it`);
		this.setState('failed');
		return false;
	}

	private async startNow(): Promise<void> {
		if (this.client) return;
		const s = this.o.settings();
		for (const p of s.problems) this.o.log.warn(p);
		if (!this.o.exists(s.serverPath)) {
			this.o.log.error(
				s.serverPathFromSetting
					? `freecode.serverPath is ${s.serverPath}, and there is no file there.`
					: `The sidecar is not in this build of the extension (no ${s.serverPath}). Set freecode.serverPath to a freecode-serve binary.`,
			);
			this.setState('missing');
			return;
		}
		this.o.log.info(`starting ${s.serverPath}`);
		const client = this.o.newClient(s);
		this.client = client;
		this.current = new Session(client.connection, this.o.model, this.o.hooks);
		this.listening = this.current.listen();
		client.onDidChangeState((state) => {
			// A client stopped since says nothing about the one that runs now.
			if (client !== this.client) return;
			if (state === 'running') {
				this.setState('running');
				void this.current?.refresh();
			} else if (state === 'starting') {
				this.setState('starting');
			} else {
				this.o.model.clear();
			}
		});
		this.setState('starting');
		try {
			await client.start();
		} catch (e) {
			this.o.log.error(`the sidecar did not start: ${(e as Error).message}`);
			this.setState('failed');
		}
	}

	private async stopNow(): Promise<void> {
		const client = this.client;
		this.client = undefined;
		this.listening?.dispose();
		this.listening = undefined;
		this.current = undefined;
		this.o.model.clear();
		if (client) {
			try {
				await client.stop(stopTimeoutMs);
			} catch (e) {
				this.o.log.warn(`stopping the sidecar: ${(e as Error).message}`);
			}
		}
		this.setState('stopped');
	}
}
