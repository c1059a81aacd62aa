// The sidecar process: a vscode-languageclient LanguageClient spawning
// freecode-serve over stdio, restarted after a crash at most
// RestartBudget.max times in its window, then stopped with an explanation.
// Its stderr goes to the "FreeCode Sidecar" output channel, the JSON-RPC
// trace (freecode.trace.server) to "FreeCode Trace".

import * as fs from 'node:fs';
import * as vscode from 'vscode';
import {
	CloseAction,
	ErrorAction,
	LanguageClient,
	RevealOutputChannelOn,
	State,
	type LanguageClientOptions,
	type ServerOptions,
	type StateChangeEvent,
} from 'vscode-languageclient/node';
import type { ServersModel } from './model';
import type { InitializationOptions } from './protocol';
import { RestartBudget } from './restartPolicy';
import { Session, type Hooks } from './session';
import type { Settings } from './settings';
import type { SidecarState } from './statusText';

/**
 * openSignInPage answers window/showDocument for a web page to open
 * outside VS Code (the sidecar's sign-in pages) with the URL as the sidecar
 * sent it: the client's own handler goes through vscode.Uri, which decodes
 * the query's escapes and could change a sign-in URL's parameters. Anything
 * else goes to the client's handler.
 */
const openSignInPage: NonNullable<NonNullable<LanguageClientOptions['middleware']>['window']>['showDocument'] = async (params, token, next) => {
	if (params.external === true && /^https?:\/\//i.test(params.uri)) {
		try {
			// openExternal takes the string as it is, though it is typed for a Uri.
			return { success: await vscode.env.openExternal(params.uri as unknown as vscode.Uri) };
		} catch {
			return { success: false };
		}
	}
	return next(params, token);
};

/** How long stop waits for shutdown/exit before the client kills the sidecar. */
const stopTimeoutMs = 5000;

/** Sidecar owns the LanguageClient and the Session on top of it. */
export class Sidecar implements vscode.Disposable {
	readonly output: vscode.LogOutputChannel;
	readonly trace: vscode.LogOutputChannel;
	private client?: LanguageClient;
	private current?: Session;
	private listening?: vscode.Disposable;
	private stateValue: SidecarState = 'stopped';
	private readonly stateEmitter = new vscode.EventEmitter<SidecarState>();
	/** onDidChangeState fires on every SidecarState change. */
	readonly onDidChangeState = this.stateEmitter.event;
	private readonly budget = new RestartBudget();
	/** The path the last start looked for, for the explanation when it is missing. */
	missingPath?: string;

	constructor(
		private readonly model: ServersModel,
		private readonly hooks: Hooks,
		private readonly settings: () => Settings,
	) {
		this.output = vscode.window.createOutputChannel('FreeCode Sidecar', { log: true });
		this.trace = vscode.window.createOutputChannel('FreeCode Trace', { log: true });
	}

	get state(): SidecarState {
		return this.stateValue;
	}

	/** session is the live session, when the sidecar runs. */
	get session(): Session | undefined {
		return this.stateValue === 'running' ? this.current : undefined;
	}

	private setState(s: SidecarState): void {
		if (this.stateValue === s) return;
		this.stateValue = s;
		this.stateEmitter.fire(s);
	}

	/** start spawns the sidecar, unless its binary is missing (then the state says so). */
	async start(): Promise<void> {
		if (this.client) return;
		const s = this.settings();
		for (const p of s.problems) this.output.warn(p);
		if (!fs.existsSync(s.serverPath)) {
			this.missingPath = s.serverPath;
			this.output.error(
				s.serverPathFromSetting
					? `freecode.serverPath is ${s.serverPath}, and there is no file there.`
					: `The sidecar is not in this build of the extension (no ${s.serverPath}). Set freecode.serverPath to a freecode-serve binary.`,
			);
			this.setState('missing');
			return;
		}
		this.missingPath = undefined;
		this.output.info(`starting ${s.serverPath}`);
		const client = this.build(s);
		this.client = client;
		this.current = new Session(client, this.model, this.hooks);
		this.listening = this.current.listen();
		client.onDidChangeState((e: StateChangeEvent) => {
			if (client !== this.client) return;
			if (e.newState === State.Running) {
				this.setState('running');
				void this.current?.refresh();
			} else if (e.newState === State.Starting) {
				this.setState('starting');
			} else {
				this.model.clear();
			}
		});
		this.setState('starting');
		try {
			await client.start();
		} catch (e) {
			this.output.error(`the sidecar did not start: ${(e as Error).message}`);
			if (client === this.client) this.setState('failed');
		}
	}

	private build(s: Settings): LanguageClient {
		// No transport: that is stdio too, without the --stdio argument
		// TransportKind.stdio appends, which freecode-serve (stdio unless
		// told --listen) does not take.
		const serverOptions: ServerOptions = { command: s.serverPath };
		const init: InitializationOptions = {
			...(s.configPath ? { configPath: s.configPath } : {}),
			// Forms and URLs are asked with VS Code's own inputs; completions
			// need VS Code's language model API (samplingPrompt.ts).
			capabilities: { elicitation: true, sampling: typeof vscode.lm?.selectChatModels === 'function' },
		};
		const clientOptions: LanguageClientOptions = {
			// No documents: the sidecar serves FreeCode's own methods, not a language.
			documentSelector: [],
			initializationOptions: init,
			outputChannel: this.output,
			traceOutputChannel: this.trace,
			revealOutputChannelOn: RevealOutputChannelOn.Never,
			errorHandler: {
				error: () => ({ action: ErrorAction.Continue, handled: true }),
				closed: () => this.closed(),
			},
			middleware: { window: { showDocument: openSignInPage } },
		};
		// The id makes the client read freecode.trace.server itself.
		return new LanguageClient('freecode', 'FreeCode Sidecar', serverOptions, clientOptions);
	}

	private closed() {
		if (this.budget.crashed()) {
			this.output.warn(`the sidecar exited; restarting it (${this.budget.recent} of ${this.budget.max} restarts in ${this.budget.windowMs / 60000} minutes)`);
			return { action: CloseAction.Restart, handled: true };
		}
		this.output.error(`the sidecar exited ${this.budget.recent} times within ${this.budget.windowMs / 60000} minutes; not restarting it`);
		this.setState('failed');
		void vscode.window
			.showErrorMessage(
				`FreeCode's sidecar stopped ${this.budget.recent} times in ${this.budget.windowMs / 60000} minutes, so it is not restarted. Its log says why.`,
				'Show Log',
				'Restart Sidecar',
			)
			.then((pick) => {
				if (pick === 'Show Log') this.output.show();
				if (pick === 'Restart Sidecar') void this.restart();
			});
		return { action: CloseAction.DoNotRestart, handled: true };
	}

	/** stop shuts the sidecar down (shutdown, exit), killing it if it does not go in time. */
	async stop(): Promise<void> {
		const client = this.client;
		this.client = undefined;
		this.listening?.dispose();
		this.listening = undefined;
		this.current = undefined;
		this.model.clear();
		if (client) {
			try {
				await client.stop(stopTimeoutMs);
			} catch (e) {
				this.output.warn(`stopping the sidecar: ${(e as Error).message}`);
			}
		}
		this.setState('stopped');
	}

	/** restart is the user's restart: it also forgets earlier crashes. */
	async restart(): Promise<void> {
		this.budget.reset();
		await this.stop();
		await this.start();
	}

	dispose(): void {
		void this.stop();
		this.stateEmitter.dispose();
		this.output.dispose();
		this.trace.dispose();
	}
}
