// Reading the freecode.* settings from VS Code and describing the machine for
// settings.ts, which does the resolving.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import { resolveSettings, type Machine, type Settings } from './settings';

/** machine describes where the extension runs. */
export function machine(ext: vscode.ExtensionContext): Machine {
	return {
		extensionPath: ext.extensionPath,
		home: os.homedir(),
		platform: process.platform,
		env: process.env,
		exists: (p) => fs.existsSync(p),
	};
}

/** readSettings resolves the current freecode.* settings. */
export function readSettings(ext: vscode.ExtensionContext): Settings {
	const c = vscode.workspace.getConfiguration('freecode');
	return resolveSettings(
		{
			serverPath: c.get('serverPath'),
			cliPath: c.get('cliPath'),
			configPath: c.get('configPath'),
			trace: c.get('trace.server'),
			argumentChars: c.get('permissionPrompt.argumentChars'),
		},
		machine(ext),
	);
}
