import * as vscode from 'vscode';
import { adoptConfirmation } from '../confirmations';
import type { Node } from '../nodes';
import { oneLine, printable } from '../../../../frontend/src/text';
import { taskNode } from '../views/tasksTree';
import type { CommandFactory } from './util';
import { confirm, session, showError } from './util';

/**
 * adoptTask makes another frontend's task ours (freecode/tasks/adopt), from
 * its row in the Tasks group, once the user says so: its status message,
 * result and questions then come to this window, and Cancel Task is
 * offered. Without its row it asks which task that is not ours.
 */
export const adoptTask: CommandFactory = (fc) => async (node?: unknown) => {
	const s = session(fc);
	if (!s) return;
	const n = node as Node | undefined;
	let task = n?.kind === 'task' ? fc.model.tasks().find((t) => t.server === n.server && t.taskId === n.taskId) : undefined;
	if (!task) {
		const others = fc.model.tasks().filter((t) => !t.mine);
		if (others.length === 0) {
			void vscode.window.showInformationMessage('Every task is yours already.');
			return;
		}
		const now = Date.now();
		const pick = await vscode.window.showQuickPick(
			others.map((t) => {
				const row = taskNode(t, now);
				return { label: row.label, description: row.description, detail: `task ${oneLine(printable(t.taskId), 80)}`, task: t };
			}),
			{ placeHolder: 'Adopt which task?' },
		);
		if (!pick) return;
		task = pick.task;
	}
	if (task.mine) return;
	if (!(await confirm(adoptConfirmation(task)))) return;
	try {
		// The answer is the task whole; the model has it, and the row offers what is ours to do.
		await s.adoptTask(task.server, task.taskId);
		vscode.window.setStatusBarMessage(`Task ${printable(task.taskId)} of ${printable(task.server)} is yours`, 5000);
	} catch (e) {
		showError(`Adopting task ${printable(task.taskId)}`, e);
	}
};
