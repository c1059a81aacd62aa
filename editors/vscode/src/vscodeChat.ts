// Registers FreeCode's servers with VS Code's MCP support (chatGateway.ts
// decides what), where the running VS Code has it
// (vscode.lm.registerMcpServerDefinitionProvider, VS Code 1.101 and later;
// the extension's engine is older, so it and the definition classes are
// looked up rather than typed). With McpHttpServerDefinition, each of the
// running sidecar's servers is one definition, served by the sidecar
// itself (freecode/gateway/open); without it, one stdio definition runs
// `freecode mcp serve --stdio`. VS Code asks the provider when its chat
// needs the servers, and again when onDidChangeMcpServerDefinitions fires:
// the chat's servers changed, the sidecar restarted, or a setting or
// folder changed. Turning freecode.vscodeChat.enabled off takes FreeCode
// out of its list.

import * as vscode from 'vscode';
import type { ServersModel } from '../../../frontend/src/model';
import { DefinitionChanges, GATEWAY_PROVIDER, gatewayDefinition, httpDefinitions } from './chatGateway';
import type { Sidecar } from './client';
import type { Settings } from './settings';

/** The parts of VS Code's MCP API used here. */
interface McpApi {
	registerMcpServerDefinitionProvider(
		id: string,
		provider: {
			onDidChangeMcpServerDefinitions?: vscode.Event<void>;
			provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[] | Promise<unknown[]>;
		},
	): vscode.Disposable;
}
type StdioDefinition = new (label: string, command: string, args?: string[], env?: Record<string, string>, version?: string) => {
	cwd?: vscode.Uri;
};
type HttpDefinition = new (label: string, uri: vscode.Uri, headers?: Record<string, string>, version?: string) => object;

/** registerWithVSCodeChat offers FreeCode's servers to VS Code's chat; without the API it says so in the log and does nothing. */
export function registerWithVSCodeChat(ext: vscode.ExtensionContext, settings: () => Settings, sidecar: Sidecar, model: ServersModel): void {
	const log = sidecar.output;
	const lm = vscode.lm as unknown as Partial<McpApi> | undefined;
	const api = vscode as unknown as { McpStdioServerDefinition?: StdioDefinition; McpHttpServerDefinition?: HttpDefinition };
	const Stdio = api.McpStdioServerDefinition;
	const Http = api.McpHttpServerDefinition;
	if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || (!Stdio && !Http)) {
		log.info(`VS Code ${vscode.version} has no MCP server provider API: its chat does not get FreeCode's servers`);
		return;
	}
	const changed = new vscode.EventEmitter<void>();
	const version = String(ext.extension.packageJSON.version ?? '0');
	const enabled = () => vscode.workspace.getConfiguration('freecode').get<boolean>('vscodeChat.enabled', true);
	ext.subscriptions.push(
		changed,
		vscode.workspace.onDidChangeConfiguration((e) => {
			if (e.affectsConfiguration('freecode')) changed.fire();
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
	);

	let provide: () => Promise<unknown[]>;
	if (Http) {
		log.info(`VS Code's chat gets FreeCode's servers from the sidecar, one MCP server each (McpHttpServerDefinition)`);
		// The sidecar's starts, counted: each has its own port and token.
		let starts = 0;
		const changes = new DefinitionChanges();
		const update = () => {
			if (changes.update(model.servers(), starts)) changed.fire();
		};
		const offModel = model.onDidChange(update);
		ext.subscriptions.push(
			{ dispose: offModel },
			sidecar.onDidChangeState((s) => {
				if (s === 'running') starts++;
				update();
			}),
		);
		provide = async () => {
			const session = sidecar.session;
			if (!enabled() || !session) return []; // the sidecar's start will fire a change
			try {
				const g = await session.openGateway();
				return httpDefinitions(g, version).map((d) => new Http(d.label, vscode.Uri.parse(d.uri), d.headers, d.version));
			} catch (e) {
				// A sidecar still opening its workspace: its servers' first
				// statuses change the model, which fires a change.
				log.warn(`VS Code's chat: the sidecar did not open its gateway: ${e instanceof Error ? e.message : String(e)}`);
				return [];
			}
		};
	} else {
		log.info(`VS Code ${vscode.version} has no McpHttpServerDefinition: its chat gets FreeCode's servers from \`freecode mcp serve --stdio\``);
		const Definition = Stdio!;
		provide = async () => {
			const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
			const d = gatewayDefinition(settings(), enabled(), folder, version);
			if (!d) return [];
			const def = new Definition(d.label, d.command, d.args, {}, d.version);
			if (d.project) def.cwd = vscode.Uri.file(d.project);
			return [def];
		};
	}
	ext.subscriptions.push(
		lm.registerMcpServerDefinitionProvider(GATEWAY_PROVIDER, {
			onDidChangeMcpServerDefinitions: changed.event,
			provideMcpServerDefinitions: () => provide(),
		}),
	);
}
