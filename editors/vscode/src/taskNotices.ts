// A task of ours (one a call of this window started, or that it adopted)
// tells its end once, in a notification with the start of its result (the
// Tasks group keeps the rest). Tasks of other frontends, which the sidecar
// tells us without their result, and those that had ended already when
// they were first seen, say nothing.

import * as vscode from 'vscode';
import type { ServersModel } from '../../../frontend/src/model';
import type { TaskInfo } from '../../../frontend/src/protocol.gen';
import { oneLine, printable } from '../../../frontend/src/text';
import { live } from './views/tasksTree';

export class TaskNotices implements vscode.Disposable {
	private readonly running = new Set<string>();
	private readonly off: () => void;

	constructor(model: ServersModel) {
		this.off = model.onDidChange(() => {
			for (const t of model.tasks()) {
				const key = `${t.server} ${t.taskId}`;
				// One another frontend adopted is its to tell.
				if (!t.mine) this.running.delete(key);
				else if (live(t.status)) this.running.add(key);
				else if (this.running.delete(key)) this.tell(t);
			}
		});
	}

	private tell(t: TaskInfo): void {
		const what = `${printable(t.tool)} on ${printable(t.server)}`;
		const text = (t.result?.content ?? []).filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string).join(' ');
		if (t.status === 'completed' && !t.result?.isError) void vscode.window.showInformationMessage(`Task ${what} completed${text ? `: ${oneLine(text, 200)}` : ''}`);
		else if (t.status === 'completed') void vscode.window.showErrorMessage(`Task ${what} completed with an error${text ? `: ${oneLine(text, 200)}` : ''}`);
		else if (t.status === 'failed') void vscode.window.showErrorMessage(`Task ${what} failed: ${oneLine(t.error ?? t.statusMessage ?? 'no reason given', 200)}`);
		else void vscode.window.showInformationMessage(`Task ${what} was cancelled`);
	}

	dispose(): void {
		this.off();
	}
}
