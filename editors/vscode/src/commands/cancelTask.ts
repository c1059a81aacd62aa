import * as vscode from 'vscode';
import type { Node } from '../nodes';
import { printable } from '../text';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/** cancelTask cancels a running task from its row in the Tasks group (freecode/tasks/cancel). */
export const cancelTask: CommandFactory = (fc) => async (node?: unknown) => {
	const n = node as Node | undefined;
	if (n?.kind !== 'task') return;
	const s = session(fc);
	if (!s) return;
	try {
		// Its end comes as freecode/tasks/changed, which the row and a notification say.
		await s.cancelTask(n.server, n.taskId);
		vscode.window.setStatusBarMessage(`Cancelling task ${printable(n.taskId)} of ${printable(n.server)}`, 5000);
	} catch (e) {
		showError(`Cancelling task ${printable(n.taskId)}`, e);
	}
};
