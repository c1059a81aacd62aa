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
	const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
	await vscode.window.showTextDocument(doc, { preview: false });
};
