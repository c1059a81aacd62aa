import * as vscode from 'vscode';
import { cliError, message, runCli } from '../cli';
import { removeConfirmation } from '../confirmations';
import { entryPosition } from '../configEntry';
import type { FreeCode } from '../context';
import type { ServerAction } from '../../../../frontend/src/serverActions';
import { configFile } from '../settings';
import type { CommandFactory } from './util';
import { openConfigDocument } from './openConfig';
import { confirm, serverName, showError } from './util';

/**
 * The commands that edit a server's entry in the user's config: Enable,
 * Disable and Remove, each through the CLI (`freecode mcp enable|disable|
 * remove`, which keep the file's comments and other keys); the sidecar sees
 * the file change and the view follows. And Show Configuration, which opens
 * the file at the entry.
 */

async function configPath(fc: FreeCode, scope: 'user' | 'project'): Promise<string | undefined> {
	const s = fc.sidecar.session;
	if (s) {
		try {
			const p = await s.project();
			return scope === 'project' ? p.settingsPaths.project : p.configPath;
		} catch (e) {
			fc.sidecar.output.warn(`freecode/project failed: ${(e as Error).message}`);
		}
	}
	return scope === 'user' ? configFile(fc.settings(), fc.machine()) : undefined;
}

function edit(action: ServerAction & ('enable' | 'disable' | 'remove')): CommandFactory {
	return (fc) => async (node?: unknown) => {
		const name = await serverName(fc, node, action);
		if (!name) return;
		if (action === 'remove') {
			const file = (await configPath(fc, 'user')) ?? 'your config';
			if (!(await confirm(removeConfirmation(name, file)))) return;
		}
		try {
			const r = await runCli(fc.settings(), ['mcp', action, name]);
			if (r.code !== 0) {
				void vscode.window.showErrorMessage(`${name}: ${cliError(r)}`);
				return;
			}
			vscode.window.setStatusBarMessage(`$(check) ${message(r.stdout.split('\n')[0])}`, 5000);
		} catch (e) {
			showError(`${action} ${name}`, e);
		}
	};
}

export const enableServer = edit('enable');
export const disableServer = edit('disable');
export const removeServer = edit('remove');

/** showServerConfiguration opens the file that holds a server's entry, at the entry. */
export const showServerConfiguration: CommandFactory = (fc) => async (node?: unknown) => {
	const name = await serverName(fc, node, 'showConfiguration');
	if (!name) return;
	const scope = fc.model.server(name)?.scope ?? 'user';
	if (scope === 'managed') {
		// Its entry is the organization's, in a system file the user does not edit.
		void vscode.window.showInformationMessage(`${name} is your organization's server, from its managed settings; \`freecode policy\` shows them.`);
		return;
	}
	const file = await configPath(fc, scope);
	if (!file) {
		void vscode.window.showErrorMessage(`The file that holds ${name} is not known: is the sidecar running?`);
		return;
	}
	const editor = await openConfigDocument(vscode.Uri.file(file));
	const at = entryPosition(editor.document.getText(), name);
	const pos = at ? new vscode.Position(at.line, at.character) : new vscode.Position(0, 0);
	editor.selection = new vscode.Selection(pos, pos);
	editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
	if (!at) void vscode.window.showWarningMessage(`${name}'s entry was not found in ${file}.`);
};
