import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { cliError, outcome, runCli, type CliResult } from '../cli';
import type { FreeCode } from '../context';
import { droppedServers, ownConfigToImport, ownConfigWords, vscodeSources } from '../importSources';
import { IMPORT_TO_KEYCHAIN, importConfirmation } from '../confirmations';
import { truncate } from '../../../../frontend/src/text';
import type { CommandFactory } from './util';
import { confirmChoice, showError } from './util';

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
/** chooseFile asks for a client's config file when it is not where it usually is. */
async function chooseFile(label: string, why: string): Promise<string | undefined> {
	const files = await vscode.window.showOpenDialog({
		canSelectMany: false,
		filters: { JSON: ['json', 'jsonc'] },
		title: `${why} Choose ${label}'s MCP config file`,
		openLabel: 'Import from This File',
	});
	return files?.[0]?.fsPath;
}

/**
 * vscodeFile picks VS Code's mcp.json: the running editor's own, the
 * workspace's, the usual places (importSources.ts); a picker when there
 * are several, the file dialog when there is none.
 */
async function vscodeFile(fc: FreeCode): Promise<string | undefined> {
	const found = vscodeSources({
		globalStorage: fc.ext.globalStorageUri.fsPath,
		home: os.homedir(),
		platform: process.platform,
		env: process.env,
		folders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
		exists: (p) => fs.existsSync(p),
	});
	if (found.length === 0) return chooseFile('VS Code', 'No mcp.json of VS Code was found.');
	if (found.length === 1) return found[0].path;
	const choose = { label: '$(folder-opened) Choose File…', path: '' };
	const pick = await vscode.window.showQuickPick(
		[...found.map((s) => ({ label: s.label, description: s.path, path: s.path })), choose],
		{ placeHolder: "Which of VS Code's MCP configs?" },
	);
	if (!pick) return undefined;
	return pick === choose ? chooseFile('VS Code', '') : pick.path;
}

export const importServers: CommandFactory = (fc) => async () => {
	// FreeCode's own config saved in another client's shape: importing it
	// into itself turns it into FreeCode's (the problem the sidecar shows
	// at its key says so).
	const own = ownConfigToImport(fc.model.fileProblems());
	// title is how the dialog and the messages name the source.
	const items: { label: string; client: string; description?: string; path?: string; title?: string }[] = own
		? [{ label: 'This Config File', title: 'this config file', description: ownConfigWords(own, kinds), client: own.client, path: own.path }, ...kinds]
		: kinds;
	const pick = await vscode.window.showQuickPick(items, { placeHolder: 'Import MCP servers from' });
	if (!pick) return;
	const title = pick.title ?? pick.label;
	const args = ['mcp', 'import', pick.client];
	try {
		if (pick.path !== undefined) {
			args.push(pick.path);
		} else if (pick.client === 'vscode') {
			const file = await vscodeFile(fc);
			if (!file) return;
			args.push(file);
		}
		let preview: CliResult = await runCli(fc.settings(), [...args, '--dry-run']);
		if (preview.code !== 0 && noConfigAt.test(preview.stderr)) {
			// Not a toast that goes away: the dialog, saying why.
			const file = await chooseFile(pick.label, `${preview.stderr.trim().split('\n')[0]}.`);
			if (!file) return;
			args.push(file);
			preview = await runCli(fc.settings(), [...args, '--dry-run']);
		}
		if (preview.code !== 0) {
			void vscode.window.showErrorMessage(`Import from ${title} failed: ${cliError(preview)}`);
			return;
		}
		const text = `${preview.stdout}${preview.stderr}`.trim();
		if (/^No MCP servers found/m.test(text) || /Dry run: 0 servers/.test(text)) {
			void vscode.window.showInformationMessage(truncate(text, 500));
			return;
		}
		// Converting the file in place keeps only what it now holds: the
		// user's servers the sidecar still runs from the last good config
		// stop, and the dialog says so.
		const running = fc.model.servers().filter((s) => s.scope === 'user').map((s) => s.name);
		const dropped = pick.path !== undefined && own && pick.path === own.path ? droppedServers(running, text) : [];
		const go = await confirmChoice(importConfirmation(title, text, dropped));
		if (!go) return;
		const r = await runCli(fc.settings(), go === IMPORT_TO_KEYCHAIN ? [...args, '--move-secrets'] : args);
		const out = `${r.stdout}${r.stderr}`.trim();
		if (r.code !== 0) void vscode.window.showErrorMessage(truncate(out, 1000));
		else void vscode.window.showInformationMessage(outcome(out) || 'Imported.');
	} catch (e) {
		showError(`Importing from ${title}`, e);
	}
};
