import * as vscode from 'vscode';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/** untrustProject withdraws trust: the project's allow rules stop applying. */
export const untrustProject: CommandFactory = (fc) => async () => {
	const s = session(fc);
	if (!s) return;
	try {
		const r = await s.trust(false);
		await vscode.commands.executeCommand('setContext', 'freecode.projectTrusted', r.projectTrusted);
	} catch (e) {
		showError('Withdrawing trust', e);
	}
};
