// Registers FreeCode's gateway (chatGateway.ts) with VS Code's MCP support,
// where the running VS Code has it (vscode.lm.registerMcpServerDefinitionProvider,
// VS Code 1.101 and later; the extension's engine is older, so it is looked
// up rather than typed). VS Code asks the provider when its chat needs the
// servers; turning freecode.vscodeChat.enabled off takes FreeCode out of
// its list.

import * as vscode from 'vscode';
import { GATEWAY_PROVIDER, gatewayDefinition } from './chatGateway';
import type { Settings } from './settings';

/** The parts of VS Code's MCP API used here. */
interface McpApi {
	registerMcpServerDefinitionProvider(
		id: string,
		provider: { onDidChangeMcpServerDefinitions?: vscode.Event<void>; provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[] },
	): vscode.Disposable;
}
type StdioDefinition = new (label: string, command: string, args?: string[], env?: Record<string, string>, version?: string) => {
	cwd?: vscode.Uri;
};

/** registerWithVSCodeChat offers the gateway to VS Code's chat; without the API it says so in the log and does nothing. */
export function registerWithVSCodeChat(ext: vscode.ExtensionContext, settings: () => Settings, log: vscode.LogOutputChannel): void {
	const lm = vscode.lm as unknown as Partial<McpApi> | undefined;
	const Definition = (vscode as unknown as { McpStdioServerDefinition?: StdioDefinition }).McpStdioServerDefinition;
	if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || !Definition) {
		log.info(`VS Code ${vscode.version} has no MCP server provider API: its chat does not get FreeCode's servers`);
		return;
	}
	const changed = new vscode.EventEmitter<void>();
	const version = String(ext.extension.packageJSON.version ?? '0');
	ext.subscriptions.push(
		changed,
		vscode.workspace.onDidChangeConfiguration((e) => {
			if (e.affectsConfiguration('freecode')) changed.fire();
		}),
		vscode.workspace.onDidChangeWorkspaceFolders(() => changed.fire()),
		lm.registerMcpServerDefinitionProvider(GATEWAY_PROVIDER, {
			onDidChangeMcpServerDefinitions: changed.event,
			provideMcpServerDefinitions: () => {
				const enabled = vscode.workspace.getConfiguration('freecode').get<boolean>('vscodeChat.enabled', true);
				const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
				const d = gatewayDefinition(settings(), enabled, folder, version);
				if (!d) return [];
				const def = new Definition(d.label, d.command, d.args, {}, d.version);
				if (d.project) def.cwd = vscode.Uri.file(d.project);
				return [def];
			},
		}),
	);
}
