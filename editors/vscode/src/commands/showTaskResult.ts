import * as vscode from 'vscode';
import type { Node } from '../nodes';
import { taskResultDocument } from '../../../../frontend/src/resultText';
import { printable } from '../../../../frontend/src/text';
import { taskDocName } from '../views/tasksTree';
import type { CommandFactory } from './util';

/**
 * showTaskResult opens the result of a completed task of ours, from its row
 * in the Tasks group, as a read-only document. Another frontend's task has
 * no result here: the sidecar tells it to that frontend only.
 */
export const showTaskResult: CommandFactory = (fc) => async (node?: unknown) => {
	const n = node as Node | undefined;
	const task = n?.kind === 'task' ? fc.model.tasks().find((t) => t.server === n.server && t.taskId === n.taskId) : undefined;
	const doc = task && taskResultDocument(task);
	if (!task || doc === undefined) {
		void vscode.window.showInformationMessage(
			task && !task.mine
				? `Task ${printable(task.taskId)} is not yours: Adopt Task first to see its result.`
				: 'Pick a completed task of yours in the Tasks group to see its result.',
		);
		return;
	}
	await fc.docs.show(taskDocName(task), doc, { preview: true });
};
