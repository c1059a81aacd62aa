import * as vscode from 'vscode';
import { message, runCli, type CliResult } from '../cli';
import { importConfirmation } from '../confirmations';
import { truncate } from '../text';
import type { CommandFactory } from './util';
import { confirm, showError } from './util';

const kinds = [
	{ label: 'Claude Desktop', client: 'claude-desktop' },
	{ label: 'Claude Code', client: 'claude-code' },
	{ label: 'VS Code', client: 'vscode' },
	{ label: 'Cursor', client: 'cursor' },
];

/** What the CLI prints when the client's usual file does not exist. */
const noConfigAt = /^no .* config at /m;

/**
 * importServers copies another client's MCP servers into FreeCode's config
 * with `freecode mcp import`: a dry run first, shown to the user, and only
 * then the import.
 */
export const importServers: CommandFactory = (fc) => async () => {
	const pick = await vscode.window.showQuickPick(kinds, { placeHolder: 'Import MCP servers from' });
	if (!pick) return;
	const args = ['mcp', 'import', pick.client];
	try {
		let preview: CliResult = await runCli(fc.settings(), [...args, '--dry-run']);
		if (preview.code !== 0 && noConfigAt.test(preview.stderr)) {
			const choose = await vscode.window.showWarningMessage(preview.stderr.trim(), 'Choose File…');
			if (!choose) return;
			const files = await vscode.window.showOpenDialog({
				canSelectMany: false,
				filters: { JSON: ['json'] },
				title: `${pick.label}'s MCP config`,
			});
			if (!files || files.length === 0) return;
			args.push(files[0].fsPath);
			preview = await runCli(fc.settings(), [...args, '--dry-run']);
		}
		if (preview.code !== 0) {
			void vscode.window.showErrorMessage(`Import from ${pick.label} failed: ${(preview.stderr || preview.stdout).trim()}`);
			return;
		}
		const text = `${preview.stdout}${preview.stderr}`.trim();
		if (/^No MCP servers found/m.test(text) || /Dry run: 0 servers/.test(text)) {
			void vscode.window.showInformationMessage(truncate(text, 500));
			return;
		}
		if (!(await confirm(importConfirmation(pick.label, text)))) return;
		const r = await runCli(fc.settings(), args);
		const out = `${r.stdout}${r.stderr}`.trim();
		if (r.code !== 0) void vscode.window.showErrorMessage(truncate(out, 1000));
		else void vscode.window.showInformationMessage(message(out.split('\n').pop() ?? 'Imported.'));
	} catch (e) {
		showError(`Importing from ${pick.label}`, e);
	}
};
