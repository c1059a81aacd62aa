// The Tasks group of the MCP Servers tree: the tasks that calls started
// (MCP Tasks, freecode/tasks), above the servers while there are any. Each
// says its tool and server, its status and status message, and how long it
// has run (until now while it runs, in whole minutes, so that its row is
// redrawn once a minute and not under the pointer of someone clicking its
// Cancel; to the second once it ended); a live one can be cancelled. Pure:
// no `vscode` import; now is passed in.

import type { ServersModel } from '../model';
import type { Icon, TaskNode, TasksNode } from '../nodes';
import type { TaskInfo, TaskStatus } from '../protocol';
import { oneLine, printable } from '../text';

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

/** taskNode is one task's row at time now (ms since the epoch). */
export function taskNode(t: TaskInfo, now: number): TaskNode {
	const start = Date.parse(t.createdAt);
	const end = live(t.status) ? now : Date.parse(t.updatedAt);
	const took = Number.isFinite(start) && Number.isFinite(end) ? (live(t.status) ? runningFor : elapsed)(end - start) : '';
	const message = t.status === 'failed' ? t.error ?? t.statusMessage : t.statusMessage;
	const description = [statusWords[t.status], took, message ? oneLine(message, 80) : ''].filter((x) => x !== '').join(' · ');
	const lines = [`${printable(t.tool)} on ${printable(t.server)}, task ${printable(t.taskId)}`, `${statusWords[t.status]}${took ? `, ${live(t.status) ? 'running for' : 'took'} ${took}` : ''}`];
	if (message) lines.push(printable(message));
	if (t.status === 'completed' && t.result) {
		const text = t.result.content.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string).join('\n');
		if (text) lines.push('', oneLine(text, 300));
		if (t.result.isError) lines.push('(the tool reported an error)');
	}
	if (live(t.status)) lines.push('', 'Cancel Task stops it on its server.');
	return {
		kind: 'task',
		server: t.server,
		taskId: t.taskId,
		label: `${oneLine(t.tool, 60)} (${oneLine(t.server, 40)})`,
		description,
		tooltip: lines.join('\n'),
		icon: icons[t.status],
		contextValue: live(t.status) ? 'task live' : 'task',
	};
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
			tooltip: 'Tool calls that their servers run as tasks (MCP Tasks): their status, how long they ran, and Cancel for a running one.',
			icon: { id: 'tasklist' },
			contextValue: 'tasks',
		},
	];
}

/** taskNodes is the Tasks group's children at time now, the newest first. */
export function taskNodes(model: ServersModel, now: number): TaskNode[] {
	return model.tasks().map((t) => taskNode(t, now));
}
