// What the integration tests share: the real freecode-serve spawned over
// stdio with a throw-away HOME and config, a Session on it through
// vscode-jsonrpc (what vscode-languageclient uses underneath), initialized
// as the extension initializes it; and a wait on the model that fails with
// the sidecar's stderr.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import type { ServersModel } from '../../src/model';
import type { ClientCapabilities } from '../../src/protocol';
import { Session, type Hooks } from '../../src/session';

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

/**
 * startSidecar spawns bin/freecode-serve with HOME under tmp, the config
 * at configPath, workspace as its one folder, and initializes it.
 */
export async function startSidecar(o: {
	bin: string;
	tmp: string;
	workspace: string;
	configPath: string;
	model: ServersModel;
	hooks: Hooks;
	capabilities?: ClientCapabilities;
}): Promise<Sidecar> {
	const child: ChildProcess = spawn(path.join(o.bin, 'freecode-serve'), [], {
		env: { PATH: process.env.PATH, HOME: path.join(o.tmp, 'home'), TMPDIR: o.tmp },
		stdio: ['pipe', 'pipe', 'pipe'],
	});
	let stderr = '';
	child.stderr!.on('data', (b) => (stderr += b.toString()));
	// A sidecar that dies leaves requests pending forever: fail with its stderr instead.
	const exited = new Promise<never>((_, reject) => {
		child.once('exit', (code, signal) => reject(new Error(`freecode-serve exited (${code ?? signal}); stderr:\n${stderr}`)));
	});
	exited.catch(() => {});
	const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
	const session = new Session(conn, o.model, o.hooks);
	const listening = session.listen();
	conn.listen();
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
				capabilities: {},
				initializationOptions: { configPath: o.configPath, ...(o.capabilities ? { capabilities: o.capabilities } : {}) },
			},
		),
	]);
	assert.equal(init.capabilities.experimental?.freecode?.protocolVersion, 1);
	assert.equal(init.serverInfo?.name, 'freecode-serve');
	await conn.sendNotification('initialized', {});
	await Promise.race([exited, session.refresh()]);
	return {
		conn,
		session,
		stderr: () => stderr,
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
