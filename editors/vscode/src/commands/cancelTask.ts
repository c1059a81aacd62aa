import * as vscode from 'vscode';
import type { Node } from '../nodes';
import { oneLine, printable } from '../../../../frontend/src/text';
import { live, taskNode } from '../views/tasksTree';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/**
 * cancelTask cancels a running task of ours from its row in the Tasks group
 * (freecode/tasks/cancel): another frontend's has no Cancel Task, and the
 * sidecar refuses it until we adopt it. Without its row (VS Code runs a
 * button clicked while the tree is redrawn without it), it asks which of
 * our running tasks.
 */
export const cancelTask: CommandFactory = (fc) => async (node?: unknown) => {
	const s = session(fc);
	if (!s) return;
	let n = node as Node | undefined;
	if (n?.kind !== 'task') {
		const running = fc.model.tasks().filter((t) => t.mine && live(t.status));
		if (running.length === 0) {
			void vscode.window.showInformationMessage('No task of yours is running.');
			return;
		}
		const now = Date.now();
		const pick = await vscode.window.showQuickPick(
			running.map((t) => {
				const row = taskNode(t, now);
				return { label: row.label, description: row.description, detail: `task ${oneLine(printable(t.taskId), 80)}`, row };
			}),
			{ placeHolder: 'Cancel which task?' },
		);
		if (!pick) return;
		n = pick.row;
	}
	try {
		// Its end comes as freecode/tasks/changed, which the row and a notification say.
		await s.cancelTask(n.server, n.taskId);
		vscode.window.setStatusBarMessage(`Cancelling task ${printable(n.taskId)} of ${printable(n.server)}`, 5000);
	} catch (e) {
		// Another frontend's (it adopted ours meanwhile): the sidecar's words say whose, and Adopt Task.
		showError(`Cancelling task ${printable(n.taskId)}`, e);
	}
};
