// The sidecar process in VS Code: a vscode-languageclient LanguageClient
// spawning freecode-serve over stdio, restarted after a crash at most
// RestartBudget.max times in its window, then stopped with an explanation.
// Its stderr goes to the "FreeCode Sidecar" output channel, the JSON-RPC
// trace (freecode.trace.server) to "FreeCode Trace", both through the mask
// that keeps a secret's value out of them (secretTrace.ts). When it starts,
// stops and restarts, and that those never overlap, is lifecycle.ts's.

import * as fs from 'node:fs';
import * as readline from 'node:readline';
import type { Readable } from 'node:stream';
import * as vscode from 'vscode';
import {
	CloseAction,
	ErrorAction,
	LanguageClient,
	RevealOutputChannelOn,
	State,
	type LanguageClientOptions,
	type ServerOptions,
} from 'vscode-languageclient/node';
import { externalPage } from './externalPage';
import { SidecarLifecycle, type ClientState, type SidecarClient } from './lifecycle';
import { opensByFile, pageLife, signInPageDir, writeSignInPage } from './signInPage';
import type { ServersModel } from '../../../frontend/src/model';
import type { InitializationOptions } from '../../../frontend/src/protocol.gen';
import type { Hooks, Session } from '../../../frontend/src/session';
import type { Settings } from './settings';
import { SecretMask } from './secretTrace';
import { parseLine, type ChannelLevel } from './sidecarLog';
import type { SidecarState } from '../../../frontend/src/statusText';

/**
 * openSignInPage answers window/showDocument for a web page to open
 * outside VS Code (the sidecar's sign-in pages) with the URL as the sidecar
 * sent it: the client's own handler goes through vscode.Uri, which decodes
 * the query's escapes and could change a sign-in URL's parameters. Where
 * openExternal would put the URL on a command line (signInPage.ts), it is
 * given a file only the user can read that sends the browser on to it,
 * removed after pageLife; a page that cannot be written is success: false,
 * and the sidecar opens the URL itself, the same way. Anything else goes
 * to the client's handler.
 */
const openSignInPage: NonNullable<NonNullable<LanguageClientOptions['middleware']>['window']>['showDocument'] = async (params, token, next) => {
	const page = externalPage(params);
	if (page !== undefined) {
		try {
			if (opensByFile(vscode.env.uiKind === vscode.UIKind.Desktop, vscode.env.remoteName, process.platform)) {
				const file = await writeSignInPage(signInPageDir(), page);
				setTimeout(() => void fs.promises.rm(file, { force: true }), pageLife).unref();
				return { success: await vscode.env.openExternal(vscode.Uri.file(file)) };
			}
			// openExternal takes the string as it is, though it is typed for a Uri.
			return { success: await vscode.env.openExternal(page as unknown as vscode.Uri) };
		} catch {
			return { success: false };
		}
	}
	return next(params, token);
};

/** Sidecar is the sidecar's lifecycle with VS Code's output channels, events and LanguageClient. */
export class Sidecar implements vscode.Disposable {
	readonly output: vscode.LogOutputChannel;
	readonly trace: vscode.LogOutputChannel;
	private readonly life: SidecarLifecycle;
	private readonly secrets = new SecretMask();
	private readonly stateEmitter = new vscode.EventEmitter<SidecarState>();
	/** onDidChangeState fires on every SidecarState change. */
	readonly onDidChangeState = this.stateEmitter.event;

	constructor(model: ServersModel, hooks: Hooks, settings: () => Settings) {
		this.output = vscode.window.createOutputChannel('FreeCode Sidecar', { log: true });
		this.trace = vscode.window.createOutputChannel('FreeCode Trace', { log: true });
		this.life = new SidecarLifecycle({
			model,
			hooks,
			settings,
			exists: (p) => fs.existsSync(p),
			newClient: (s) => sidecarClient(this.build(s)),
			log: this.output,
		});
		this.life.onDidChangeState((s) => this.stateEmitter.fire(s));
	}

	get state(): SidecarState {
		return this.life.state;
	}

	/** session is the live session, when the sidecar runs. */
	get session(): Session | undefined {
		return this.life.session;
	}

	/** start spawns the sidecar, unless its binary is missing (then the state says so). */
	start(): Promise<void> {
		return this.life.start();
	}

	/** stop shuts the sidecar down (shutdown, exit), killing it if it does not go in time. */
	stop(): Promise<void> {
		return this.life.stop();
	}

	/** restart is the user's restart: it also forgets earlier crashes. */
	restart(): Promise<void> {
		return this.life.restart();
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
			// What the client writes, with the value of a secret being
			// sent (Set Secret…) as ***: the trace shows every message's
			// params when freecode.trace.server is verbose.
			outputChannel: this.secrets.channel(this.output),
			traceOutputChannel: this.secrets.channel(this.trace),
			revealOutputChannelOn: RevealOutputChannelOn.Never,
			errorHandler: {
				error: () => ({ action: ErrorAction.Continue, handled: true }),
				closed: () => this.closed(),
			},
			middleware: { window: { showDocument: openSignInPage }, sendRequest: this.secrets.sendRequest },
			stdioOptions: { stdout: logLines, stderr: logLines },
		};
		// The id makes the client read freecode.trace.server itself.
		return new LanguageClient('freecode', 'FreeCode Sidecar', serverOptions, clientOptions);
	}

	private closed() {
		if (this.life.crashed()) return { action: CloseAction.Restart, handled: true };
		const b = this.life.budget;
		void vscode.window
			.showErrorMessage(
				`FreeCode's sidecar stopped ${b.recent} times in ${b.windowMs / 60000} minutes, so it is not restarted. Its log says why.`,
				'Show Log',
				'Restart Sidecar',
			)
			.then((pick) => {
				if (pick === 'Show Log') this.output.show();
				if (pick === 'Restart Sidecar') void this.restart();
			});
		return { action: CloseAction.DoNotRestart, handled: true };
	}

	dispose(): void {
		void this.stop();
		this.stateEmitter.dispose();
		this.output.dispose();
		this.trace.dispose();
	}
}

/**
 * logLines writes a stream's lines to the channel at their own level and
 * without their own time (sidecarLog.ts): the client's default tags every
 * stderr line [error] under a second timestamp.
 */
function logLines(input: Readable, channel: vscode.LogOutputChannel): void {
	let previous: ChannelLevel = 'info';
	readline.createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on('line', (line) => {
		const l = parseLine(line, previous);
		previous = l.level;
		channel[l.level](l.text);
	});
}

/** sidecarClient is a LanguageClient as the lifecycle sees it. */
function sidecarClient(c: LanguageClient): SidecarClient {
	const states: Partial<Record<State, ClientState>> = { [State.Running]: 'running', [State.Starting]: 'starting' };
	return {
		connection: c,
		start: () => c.start(),
		stop: (timeoutMs) => c.stop(timeoutMs),
		// Stopped and StartFailed are both a sidecar that is not there.
		onDidChangeState: (fn) => c.onDidChangeState((e) => fn(states[e.newState] ?? 'stopped')),
	};
}
