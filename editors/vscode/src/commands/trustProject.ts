import * as vscode from 'vscode';
import { trustConfirmation } from '../confirmations';
import type { CommandFactory } from './util';
import { confirm, session, showError } from './util';

/** trustProject makes this project's own permission rules apply, allow rules included (freecode/project/trust). */
export const trustProject: CommandFactory = (fc) => async () => {
	const s = session(fc);
	if (!s) return;
	if (!(await confirm(trustConfirmation()))) return;
	try {
		const r = await s.trust(true);
		await vscode.commands.executeCommand('setContext', 'freecode.projectTrusted', r.projectTrusted);
	} catch (e) {
		showError('Trusting the project', e);
	}
};
