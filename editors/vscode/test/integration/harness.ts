// What the integration tests share: the real freecode-serve spawned over
// stdio with a throw-away HOME and config, a Session on it through
// vscode-jsonrpc (what vscode-languageclient uses underneath), initialized
// as the extension initializes it; the same as a client the sidecar's
// lifecycle starts and stops; and a wait on the model that fails with the
// sidecar's stderr.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { ClientState, SidecarClient } from '../../src/lifecycle';
import type { ServersModel } from '../../../../frontend/src/model';
import type { ClientCapabilities } from '../../../../frontend/src/protocol.gen';
import { Session, type Hooks } from '../../../../frontend/src/session';

/** Generous: a cold MCP server start on a busy machine, not a performance goal. */
export const waitMs = 60_000;

/** Sidecar is a running freecode-serve and the session on it. */
export interface Sidecar {
	conn: MessageConnection;
	session: Session;
	/** stderr is what the sidecar wrote to stderr so far. */
	stderr(): string;
	/** exited rejects, with the stderr, if the sidecar exits before stop: race requests with it. */
	exited: Promise<never>;
	/** stop stops listening first (as the extension's Sidecar.stop does), then sends shutdown and exit and waits for the process. */
	stop(): Promise<void>;
}

/** Where a sidecar runs: its binaries, a throw-away directory for HOME, its one workspace folder and its config. */
export interface Place {
	bin: string;
	tmp: string;
	workspace: string;
	configPath: string;
	capabilities?: ClientCapabilities;
	/** More of the sidecar's environment (FREECODE_TOKEN_STORE=file: the secrets in the file under HOME, never a keychain). */
	env?: Record<string, string>;
}

/** spawnServe spawns bin/freecode-serve with HOME under tmp, keeping what it writes to stderr. */
function spawnServe(o: Place): { child: ChildProcess; stderr: () => string } {
	const child = spawn(path.join(o.bin, 'freecode-serve'), [], {
		env: { PATH: process.env.PATH, HOME: path.join(o.tmp, 'home'), TMPDIR: o.tmp, ...o.env },
		stdio: ['pipe', 'pipe', 'pipe'],
	});
	let stderr = '';
	child.stderr!.on('data', (b) => (stderr += b.toString()));
	return { child, stderr: () => stderr };
}

/** initialize sends initialize, as the extension does, and initialized. */
async function initialize(conn: MessageConnection, o: Place, exited: Promise<never>): Promise<void> {
	const folder = pathToFileURL(o.workspace).toString();
	const init = await Promise.race([
		exited,
		conn.sendRequest<{ capabilities: { experimental?: { freecode?: { protocolVersion: number } } }; serverInfo?: { name: string } }>(
			'initialize',
			{
				processId: process.pid,
				clientInfo: { name: 'freecode-vscode-integration-test' },
				rootUri: folder,
				workspaceFolders: [{ uri: folder, name: path.basename(o.workspace) }],
				// As vscode-languageclient declares it: the sidecar's sign-in pages come as window/showDocument.
				capabilities: { window: { showDocument: { support: true } } },
				initializationOptions: { configPath: o.configPath, ...(o.capabilities ? { capabilities: o.capabilities } : {}) },
			},
		),
	]);
	assert.equal(init.capabilities.experimental?.freecode?.protocolVersion, 1);
	assert.equal(init.serverInfo?.name, 'freecode-serve');
	await conn.sendNotification('initialized', {});
}

/** exitOf rejects, with the stderr, when child exits: race requests with it, or a sidecar that died leaves them pending forever. */
function exitOf(child: ChildProcess, stderr: () => string): Promise<never> {
	const exited = new Promise<never>((_, reject) => {
		child.once('exit', (code, signal) => reject(new Error(`freecode-serve exited (${code ?? signal}); stderr:\n${stderr()}`)));
	});
	exited.catch(() => {});
	return exited;
}

/**
 * startSidecar spawns bin/freecode-serve with HOME under tmp, the config
 * at configPath, workspace as its one folder, and initializes it.
 */
export async function startSidecar(o: Place & { model: ServersModel; hooks: Hooks }): Promise<Sidecar> {
	const { child, stderr } = spawnServe(o);
	const exited = exitOf(child, stderr);
	const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
	const session = new Session(conn, o.model, o.hooks);
	const listening = session.listen();
	conn.listen();
	await initialize(conn, o, exited);
	await Promise.race([exited, session.refresh()]);
	return {
		conn,
		session,
		stderr,
		exited,
		stop: async () => {
			const gone = once(child, 'exit');
			listening.dispose();
			await conn.sendRequest('shutdown');
			await conn.sendNotification('exit');
			await gone;
			conn.dispose();
		},
	};
}

/**
 * SpawnedClient is a real freecode-serve as the sidecar's lifecycle sees a
 * client, with the rules of vscode-languageclient's LanguageClient that
 * matter to it: the process is spawned at start; a client that is starting
 * cannot be stopped, nor one that is stopping started; stop sends shutdown
 * and exit and waits for the process to go. Handlers registered before
 * start (the session's) apply once it connects.
 */
export class SpawnedClient implements SidecarClient {
	private state: 'initial' | 'starting' | 'running' | 'stopping' | 'stopped' = 'initial';
	private readonly listeners = new Set<(s: ClientState) => void>();
	private readonly toServe = new PassThrough();
	private readonly fromServe = new PassThrough();
	private readonly conn = createMessageConnection(new StreamMessageReader(this.fromServe), new StreamMessageWriter(this.toServe));
	readonly connection = this.conn;
	child?: ChildProcess;
	stderr: () => string = () => '';

	constructor(private readonly o: Place) {}

	private set(s: SpawnedClient['state']): void {
		this.state = s;
		if (s === 'starting' || s === 'running' || s === 'stopped') for (const fn of this.listeners) fn(s);
	}

	/** alive says whether the process was spawned and has not exited. */
	get alive(): boolean {
		return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
	}

	async start(): Promise<void> {
		if (this.state !== 'initial') throw new Error(`this test client starts once; it is ${this.state}`);
		this.set('starting');
		const { child, stderr } = spawnServe(this.o);
		this.child = child;
		this.stderr = stderr;
		child.stdout!.pipe(this.fromServe);
		this.toServe.pipe(child.stdin!);
		this.conn.listen();
		await initialize(this.conn, this.o, exitOf(child, stderr));
		this.set('running');
	}

	async stop(): Promise<void> {
		if (this.state === 'initial' || this.state === 'stopped') return;
		if (this.state !== 'running') throw new Error(`Client is not running and can't be stopped. It's current state is: ${this.state}`);
		this.set('stopping');
		const child = this.child!;
		const gone = child.exitCode === null && child.signalCode === null ? once(child, 'exit') : Promise.resolve();
		await this.conn.sendRequest('shutdown');
		await this.conn.sendNotification('exit');
		await gone;
		this.conn.dispose();
		this.set('stopped');
	}

	onDidChangeState(fn: (s: ClientState) => void) {
		this.listeners.add(fn);
		return { dispose: () => this.listeners.delete(fn) };
	}
}

/** writeConfig writes an mcp config of servers at configPath, the user's alone. */
export function writeConfig(configPath: string, servers: unknown[]): void {
	fs.mkdirSync(path.dirname(configPath), { recursive: true });
	fs.writeFileSync(configPath, `${JSON.stringify({ mcp: { servers } }, null, 2)}\n`, { mode: 0o600 });
}

/** until resolves once ok holds, checked on every change the sidecar's messages make to the model. */
export function until(model: ServersModel, what: string, ok: () => boolean, stderr: () => string): Promise<void> {
	if (ok()) return Promise.resolve();
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => {
			off();
			reject(new Error(`waited ${waitMs} ms for ${what}; servers: ${JSON.stringify(model.servers())}; sidecar stderr:\n${stderr()}`));
		}, waitMs);
		const off = model.onDidChange(() => {
			if (!ok()) return;
			clearTimeout(timer);
			off();
			resolve();
		});
	});
}
