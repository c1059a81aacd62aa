import * as vscode from 'vscode';
import { approvalPrompt, approvedHash } from '../../../../frontend/src/approvalPrompt';
import type { CommandFactory } from './util';
import { serverAction } from './serverAction';
import { serverName } from './util';

/**
 * approveServer lets a server this project ships run (freecode/servers/approve).
 * The user is shown the whole entry the sidecar last reported, and approves
 * it by its hash: the sidecar refuses the approval if the project changed
 * the entry since, and asks again on any later change.
 */
export const approveServer: CommandFactory = (fc) => async (node?: unknown) => {
	const name = await serverName(fc, node, 'approve');
	if (!name) return;
	const st = fc.model.server(name);
	const prompt = st ? approvalPrompt(st) : { error: `No server named ${name}.` };
	if ('error' in prompt) {
		void vscode.window.showWarningMessage(prompt.error);
		return;
	}
	const picked = await vscode.window.showWarningMessage(
		prompt.message,
		{ modal: true, detail: prompt.detail },
		...prompt.choices.map((c) => ({ title: c.title })),
	);
	const hash = approvedHash(prompt, picked?.title);
	if (!hash) return;
	await serverAction(fc, { kind: 'server', name }, 'approve', 'Approving', (s, n) => s.approve(n, true, hash));
};
