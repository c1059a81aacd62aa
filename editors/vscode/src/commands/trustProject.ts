import * as vscode from 'vscode';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/** trustProject makes this project's own permission rules apply, allow rules included (freecode/project/trust). */
export const trustProject: CommandFactory = (fc) => async () => {
	const s = session(fc);
	if (!s) return;
	const ok = await vscode.window.showWarningMessage(
		'Trust this project?',
		{
			modal: true,
			detail:
				"Until you trust it, only the deny and ask rules of this project's .freecode/settings.json and " +
				'settings.local.json apply. Once trusted, their allow rules apply too, so a tool they allow runs ' +
				'without asking you. "Always allow in this project" is offered only in a trusted project.',
		},
		'Trust',
	);
	if (ok !== 'Trust') return;
	try {
		const r = await s.trust(true);
		await vscode.commands.executeCommand('setContext', 'freecode.projectTrusted', r.projectTrusted);
	} catch (e) {
		showError('Trusting the project', e);
	}
};
