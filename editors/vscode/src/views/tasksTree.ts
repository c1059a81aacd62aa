// The Tasks group of the MCP Servers tree: the tasks that calls started
// (MCP Tasks, freecode/tasks), above the servers while there are any. Each
// says its tool and server, its status and status message, and how long it
// has run (until now while it runs, in whole minutes, so that its row is
// redrawn once a minute and not under the pointer of someone clicking its
// Cancel; to the second once it ended). A task is the frontend's whose call
// started it: of ours, a live one can be cancelled and a completed one's
// result opened; another frontend's (a CLI's, a browser tab's, or nobody's
// since its frontend left or the sidecar restarted) says only that it runs,
// and can be adopted, which makes it ours. Pure: no `vscode` import; now is
// passed in.

import type { ServersModel } from '../../../../frontend/src/model';
import type { Icon, TaskNode, TasksNode } from '../nodes';
import type { TaskInfo, TaskStatus } from '../../../../frontend/src/protocol.gen';
import { oneLine, printable } from '../../../../frontend/src/text';

/** live reports whether a task still runs: working, or waiting for an answer. */
export function live(s: TaskStatus): boolean {
	return s === 'working' || s === 'input_required';
}

const statusWords: Record<TaskStatus, string> = {
	working: 'working',
	input_required: 'waiting for your answer',
	completed: 'completed',
	failed: 'failed',
	cancelled: 'cancelled',
};

const icons: Record<TaskStatus, Icon> = {
	working: { id: 'sync~spin' },
	input_required: { id: 'question', color: 'editorWarning.foreground' },
	completed: { id: 'pass', color: 'testing.iconPassed' },
	failed: { id: 'error', color: 'errorForeground' },
	cancelled: { id: 'circle-slash' },
};

/** elapsed is a duration as the view shows it: 45 s, 3 min 05 s, 2 h 04 min. */
export function elapsed(ms: number): string {
	const s = Math.max(0, Math.floor(ms / 1000));
	if (s < 60) return `${s} s`;
	const m = Math.floor(s / 60);
	if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
	return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/** runningFor is how long a live task has run as its row shows it: < 1 min, 3 min, 2 h 04 min. */
export function runningFor(ms: number): string {
	const m = Math.floor(Math.max(0, ms) / 60_000);
	if (m < 1) return '< 1 min';
	return m < 60 ? `${m} min` : elapsed(ms);
}

/**
 * The contextValue of a task's row, which package.json's menus read: "task live" (ours, running: Cancel Task),
 * "task result" (ours, completed with a result: Show Task Result), "task" (ours, otherwise ended), "task other"
 * (another frontend's, or nobody's: Adopt Task).
 */
export type TaskRowContext = 'task live' | 'task result' | 'task' | 'task other';

/** taskContext is what a task's row offers. */
export function taskContext(t: TaskInfo): TaskRowContext {
	if (!t.mine) return 'task other';
	if (live(t.status)) return 'task live';
	return t.status === 'completed' && t.result ? 'task result' : 'task';
}

const waitingWords = 'waiting for an answer';

/** taskNode is one task's row at time now (ms since the epoch). */
export function taskNode(t: TaskInfo, now: number): TaskNode {
	const start = Date.parse(t.createdAt);
	const end = live(t.status) ? now : Date.parse(t.updatedAt);
	const took = Number.isFinite(start) && Number.isFinite(end) ? (live(t.status) ? runningFor : elapsed)(end - start) : '';
	// A cancelled task's last status message is often what it was doing
	// when cancelled ("working: step 2/3"), which reads as if it still
	// worked: it is kept only where it speaks of the cancel.
	const message =
		t.status === 'failed' ? (t.error ?? t.statusMessage) : t.status === 'cancelled' && !/cancel/i.test(t.statusMessage ?? '') ? undefined : t.statusMessage;
	// Another frontend's task waits for its answer, not ours.
	const status = t.status === 'input_required' && !t.mine ? waitingWords : statusWords[t.status];
	// A working task's step first, short: a side bar cuts the end of a
	// row, and its icon says it works; any other says its status first.
	const parts = message && t.status === 'working' ? [oneLine(message, 48), took] : [status, took, message ? oneLine(message, 80) : ''];
	const description = parts.concat(t.mine ? [] : ['not yours']).filter((x) => x !== '').join(' · ');
	const lines = [`${printable(t.tool)} on ${printable(t.server)}, task ${printable(t.taskId)}`, `${status}${took ? `, ${live(t.status) ? 'running for' : 'took'} ${took}` : ''}`];
	if (message) lines.push(printable(message));
	if (t.status === 'completed' && t.result) {
		const text = t.result.content.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string).join('\n');
		if (text) lines.push('', oneLine(text, 300));
		if (t.result.isError) lines.push('(the tool reported an error)');
	}
	const context = taskContext(t);
	if (context === 'task live') lines.push('', 'Cancel Task stops it on its server.');
	if (context === 'task result') lines.push('', 'Show Task Result opens the whole of it.');
	if (context === 'task other') {
		lines.push(
			'',
			'Not yours: another frontend (a CLI, a browser tab, another window) started it, or it is nobody\'s since its frontend left or the sidecar restarted. Only its frontend sees its status message and result and may cancel it.',
			'Adopt Task makes it yours.',
		);
	}
	return {
		kind: 'task',
		server: t.server,
		taskId: t.taskId,
		label: `${oneLine(t.tool, 60)} (${oneLine(t.server, 40)})`,
		description,
		tooltip: lines.join('\n'),
		icon: icons[t.status],
		contextValue: context,
	};
}

/** taskDocName is the name of the read-only document of a task's result: one per task, in words safe in a path. */
export function taskDocName(t: TaskInfo): string {
	const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || '_';
	return `tasks/${safe(t.server)}/${safe(t.taskId)}.txt`;
}

/** tasksNodes is the Tasks group, or nothing while no call started a task. */
export function tasksNodes(model: ServersModel): TasksNode[] {
	const all = model.tasks();
	if (all.length === 0) return [];
	const running = all.filter((t) => live(t.status)).length;
	return [
		{
			kind: 'tasks',
			label: 'Tasks',
			description: running > 0 ? `${running} running` : `${all.length} ended`,
			tooltip:
				'Tool calls that their servers run as tasks (MCP Tasks): their status, how long they ran, Cancel for a running one of yours and the result of a completed one; Adopt Task for one that is not yours.',
			icon: { id: 'tasklist' },
			contextValue: 'tasks',
		},
	];
}

/** taskNodes is the Tasks group's children at time now, the newest first. */
export function taskNodes(model: ServersModel, now: number): TaskNode[] {
	return model.tasks().map((t) => taskNode(t, now));
}
