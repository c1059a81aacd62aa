import * as vscode from 'vscode';
import { addedWords, cliError, runCli } from '../cli';
import { checkRemoteUrl, checkServerName } from '../serverName';
import type { CommandFactory } from './util';
import { showError } from './util';

/**
 * addServer asks for a local command or a remote URL and a name, checks the
 * name against the rules before anything is written, and adds the entry
 * with `freecode mcp add` (which keeps the file's comments and other keys).
 * The sidecar sees the file change and the server appears in the view.
 */
export const addServer: CommandFactory = (fc) => async () => {
	const kind = await vscode.window.showQuickPick(
		[
			{ label: 'Local', description: 'a command FreeCode starts (stdio)', type: 'local' as const },
			{ label: 'Remote', description: 'a URL (Streamable HTTP or SSE)', type: 'remote' as const },
		],
		{ placeHolder: 'What kind of MCP server?', title: 'Add MCP Server (1/3)' },
	);
	if (!kind) return;
	const taken = fc.model.servers().map((s) => s.name);
	const name = await vscode.window.showInputBox({
		title: 'Add MCP Server (2/3)',
		prompt: 'Name: letters, digits, "_" and "-", at most 48; it becomes part of tool ids (mcp__<name>__<tool>)',
		validateInput: (v) => checkServerName(v.trim(), taken),
	});
	if (name === undefined) return;
	const value = await vscode.window.showInputBox({
		title: 'Add MCP Server (3/3)',
		prompt:
			kind.type === 'local'
				? 'Command line, split like a shell would (e.g. npx -y @modelcontextprotocol/server-memory)'
				: 'URL (https://…, or http:// to this machine)',
		validateInput: (v) =>
			kind.type === 'local' ? (v.trim() === '' ? 'A command is needed.' : undefined) : checkRemoteUrl(v.trim()),
	});
	if (value === undefined) return;
	try {
		const r = await runCli(fc.settings(), ['mcp', 'add', name.trim(), kind.type, value.trim()]);
		if (r.code !== 0) {
			void vscode.window.showErrorMessage(`Adding ${name.trim()} failed: ${cliError(r)}`);
			return;
		}
		// The status bar, not a toast: the new row shows the server
		// connect, and three servers added stacked three toasts over
		// the editor. Open MCP Config is in the status item's menu.
		vscode.window.setStatusBarMessage(`$(check) ${addedWords(r.stdout)}`, 8000);
	} catch (e) {
		showError('Adding the server', e);
	}
};
