// The result document of a call its server runs as a task says at first
// "running as task …": the call answered at once, and the task goes on.
// TaskResultDoc keeps that document true: when the task it follows ends,
// the document shows how (the result, the failure, the cancel), if it is
// still open and still that call's.

import type * as vscode from 'vscode';
import type { ServersModel } from '../../../frontend/src/model';
import type { TaskInfo } from '../../../frontend/src/protocol.gen';
import type { ReadOnlyDocs } from './readOnlyDocs';
import { taskEndDocument } from '../../../frontend/src/resultText';
import { live } from './views/tasksTree';

export class TaskResultDoc implements vscode.Disposable {
	private following?: { doc: string; server: string; taskId: string };
	private readonly off: () => void;

	constructor(
		private readonly model: ServersModel,
		private readonly docs: Pick<ReadOnlyDocs, 'update'>,
	) {
		this.off = model.onDidChange(() => this.check());
	}

	/** follow makes doc the document of task's end; no task (a result of its own) follows nothing. */
	follow(doc: string, task: TaskInfo | undefined): void {
		this.following = task ? { doc, server: task.server, taskId: task.taskId } : undefined;
		this.check();
	}

	private check(): void {
		const f = this.following;
		if (!f) return;
		const t = this.model.tasks().find((x) => x.server === f.server && x.taskId === f.taskId);
		// Another frontend's now (adopted away): its end is not ours to show.
		if (!t || !t.mine || live(t.status)) return;
		this.following = undefined;
		this.docs.update(f.doc, taskEndDocument(t));
	}

	dispose(): void {
		this.off();
	}
}
