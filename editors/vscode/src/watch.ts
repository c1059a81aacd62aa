// Reactions that keep the sidecar in step with VS Code: a changed path
// setting restarts it, and each (re)start reads the project's trust for the
// menus.

import * as vscode from 'vscode';
import type { FreeCode } from './context';

export function watchSidecar(fc: FreeCode): void {
	fc.ext.subscriptions.push(
		vscode.workspace.onDidChangeConfiguration((e) => {
			if (['freecode.serverPath', 'freecode.configPath'].some((k) => e.affectsConfiguration(k))) {
				fc.sidecar.output.info('a freecode path setting changed; restarting the sidecar');
				void fc.sidecar.restart();
			}
		}),
		fc.sidecar.onDidChangeState(async (state) => {
			if (state !== 'running') return;
			try {
				const p = await fc.sidecar.session?.project();
				if (!p) return;
				await vscode.commands.executeCommand('setContext', 'freecode.hasProject', p.root !== undefined);
				await vscode.commands.executeCommand('setContext', 'freecode.projectTrusted', p.projectTrusted);
			} catch (e) {
				fc.sidecar.output.warn(`freecode/project: ${(e as Error).message}`);
			}
		}),
	);
}
