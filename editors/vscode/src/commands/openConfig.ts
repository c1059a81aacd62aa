import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { configFile } from '../settings';
import type { CommandFactory } from './util';

/** A new config file: only the key FreeCode owns. */
const emptyConfig = '{\n  "mcp": {\n    "servers": []\n  }\n}\n';

/**
 * openConfig opens FreeCode's config file: the one the running sidecar
 * reads (freecode/project), else the one the settings name. A missing file
 * is created with no servers, private to the user as the sidecar makes it.
 */
export const openConfig: CommandFactory = (fc) => async () => {
	let file = configFile(fc.settings(), fc.machine());
	const s = fc.sidecar.session;
	if (s) {
		try {
			file = (await s.project()).configPath;
		} catch (e) {
			fc.sidecar.output.warn(`freecode/project failed, opening ${file}: ${(e as Error).message}`);
		}
	}
	if (!fs.existsSync(file)) {
		fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
		fs.writeFileSync(file, emptyConfig, { mode: 0o600, flag: 'wx' });
	}
	await openConfigDocument(vscode.Uri.file(file));
};

/**
 * openConfigDocument opens a config or settings file as JSON with comments,
 * which is what FreeCode reads (a plain JSON editor flags every // comment),
 * with the cursor at selection when given.
 */
export async function openConfigDocument(uri: vscode.Uri, selection?: vscode.Range): Promise<vscode.TextEditor> {
	let doc = await vscode.workspace.openTextDocument(uri);
	if (doc.languageId !== 'jsonc') doc = await vscode.languages.setTextDocumentLanguage(doc, 'jsonc');
	return vscode.window.showTextDocument(doc, { preview: false, selection });
}
