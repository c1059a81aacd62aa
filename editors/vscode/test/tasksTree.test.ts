import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ServersModel } from '../../../frontend/src/model';
import type { TaskInfo } from '../../../frontend/src/protocol.gen';
import { taskResultDocument } from '../../../frontend/src/resultText';
import { elapsed, runningFor, taskContext, taskDocName, taskNode, taskNodes, tasksNodes } from '../src/views/tasksTree';
import { children } from '../src/views/tree';

const t0 = Date.parse('2026-05-01T10:00:00Z');
const task = (over: Partial<TaskInfo>): TaskInfo => ({
	server: 'demo',
	taskId: 't1',
	tool: 'long_build',
	callId: 'c1',
	status: 'working',
	createdAt: '2026-05-01T10:00:00Z',
	updatedAt: '2026-05-01T10:00:01Z',
	mine: true,
	...over,
});

const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));

/** rowCommands are the commands package.json's menus offer on a row of contextValue, inline or in its menu. */
function rowCommands(contextValue: string): string[] {
	const out = new Set<string>();
	for (const m of pkg.contributes.menus['view/item/context'] as { command: string; when: string }[]) {
		const want = /viewItem == '([^']*)'/.exec(m.when);
		if (m.when.includes('view == freecode.servers') && want?.[1] === contextValue) out.add(m.command);
	}
	return [...out].sort();
}

test('tasks tree: no Tasks group until a call starts a task; then above the servers, running ones counted', () => {
	const m = new ServersModel();
	m.setServers([{ name: 'demo', scope: 'user', type: 'local', state: 'connected', toolCount: 0 }]);
	assert.deepEqual(children(m).map((n) => n.kind), ['server']);
	m.updateTask(task({ statusMessage: 'step 2/4' }));
	m.updateTask(task({ taskId: 't0', status: 'completed', createdAt: '2026-05-01T09:00:00Z', updatedAt: '2026-05-01T09:00:07Z' }));
	const top = children(m, undefined, t0 + 65_000);
	assert.deepEqual(top.map((n) => n.kind), ['tasks', 'server']);
	assert.equal(top[0].description, '1 running');
	// The newest first; a running one's time runs to now, an ended one's to its last change.
	const rows = children(m, top[0], t0 + 65_000);
	assert.deepEqual(rows.map((r) => [r.label, r.description, r.contextValue]), [
		['long_build (demo)', 'step 2/4 · 1 min', 'task live'],
		['long_build (demo)', 'completed · 7 s', 'task'],
	]);
	m.updateTask(task({ status: 'cancelled', statusMessage: 'cancelled by the client', updatedAt: '2026-05-01T10:00:30Z' }));
	assert.equal(tasksNodes(m)[0].description, '2 ended');
	assert.equal(taskNodes(m, t0 + 999_000)[0].description, 'cancelled · 30 s · cancelled by the client');
});

test('tasks tree: an older word on a task than the one held is ignored; setTasks replaces them all', () => {
	const m = new ServersModel();
	m.updateTask(task({ status: 'completed', updatedAt: '2026-05-01T10:00:09Z' }));
	m.updateTask(task({ status: 'working', updatedAt: '2026-05-01T10:00:02Z' }));
	assert.equal(m.tasks()[0].status, 'completed');
	m.setTasks([task({ taskId: 'other' })]);
	assert.deepEqual(m.tasks().map((t) => t.taskId), ['other']);
	m.clear();
	assert.deepEqual(m.tasks(), []);
});

test('tasks tree: each status says itself, a failure its reason, a result its text in the tooltip', () => {
	const now = t0 + 5000;
	const failed = taskNode(task({ status: 'failed', error: "the task's server is gone", updatedAt: '2026-05-01T10:00:03Z' }), now);
	assert.equal(failed.description, "failed · 3 s · the task's server is gone");
	assert.equal(failed.icon.id, 'error');
	const asking = taskNode(task({ status: 'input_required', statusMessage: 'publish?' }), now);
	assert.equal(asking.description, 'waiting for your answer · < 1 min · publish?');
	assert.equal(asking.contextValue, 'task live');
	const done = taskNode(task({ status: 'completed', result: { content: [{ type: 'text', text: 'build passed' }], isError: false } }), now);
	assert.match(done.tooltip, /\nbuild passed\n/);
	assert.doesNotMatch(done.tooltip, /Cancel Task/);
	assert.match(asking.tooltip, /Cancel Task stops it on its server\.$/);
	// A server's words are made printable: no control characters in a row.
	assert.equal(taskNode(task({ tool: 'x\u0007y', statusMessage: 'a\nb' }), now).description.includes('\n'), false);
});

test('tasks tree: elapsed reads as seconds, minutes, hours', () => {
	assert.equal(elapsed(-5), '0 s');
	assert.equal(elapsed(59_999), '59 s');
	assert.equal(elapsed(60_000), '1 min 00 s');
	assert.equal(elapsed(3_599_000), '59 min 59 s');
	assert.equal(elapsed(7_440_000), '2 h 04 min');
});

test('tasks tree: a running task says its time in whole minutes, so its row changes once a minute', () => {
	assert.equal(runningFor(-5), '< 1 min');
	assert.equal(runningFor(59_999), '< 1 min');
	assert.equal(runningFor(60_000), '1 min');
	assert.equal(runningFor(3_599_000), '59 min');
	assert.equal(runningFor(7_440_000), '2 h 04 min');
	const row = (ms: number) => taskNode(task({ statusMessage: 'step 1/2' }), t0 + ms).description;
	assert.equal(row(1_000), row(59_000));
	assert.notEqual(row(59_000), row(61_000));
});

test("tasks tree: a task of ours offers Cancel while it runs and its result once it completed; another frontend's offers Adopt only", () => {
	const now = t0 + 5000;
	const done: Partial<TaskInfo> = { status: 'completed', updatedAt: '2026-05-01T10:00:04Z', result: { content: [{ type: 'text', text: 'built' }], isError: false } };
	const rows: [string, TaskInfo, string, string[]][] = [
		['ours, running', task({}), 'task live', ['freecode.task.cancel']],
		['ours, asking', task({ status: 'input_required' }), 'task live', ['freecode.task.cancel']],
		['ours, completed', task(done), 'task result', ['freecode.task.showResult']],
		['ours, failed', task({ status: 'failed', error: 'boom' }), 'task', []],
		["another's, running", task({ mine: undefined }), 'task other', ['freecode.task.adopt']],
		["another's, completed", task({ mine: undefined, status: 'completed', updatedAt: '2026-05-01T10:00:04Z' }), 'task other', ['freecode.task.adopt']],
	];
	for (const [name, t, context, commands] of rows) {
		assert.equal(taskContext(t), context, name);
		assert.equal(taskNode(t, now).contextValue, context, name);
		assert.deepEqual(rowCommands(context), commands, name);
	}
});

test("tasks tree: another frontend's task says that it is not ours, how to adopt it, and nothing of its result", () => {
	const now = t0 + 5000;
	const other = taskNode(task({ mine: undefined, status: 'input_required' }), now);
	assert.equal(other.description, 'waiting for an answer · < 1 min · not yours');
	assert.match(other.tooltip, /Adopt Task makes it yours\.$/);
	assert.doesNotMatch(other.tooltip, /Cancel Task/);
	const ours = taskNode(task({ status: 'input_required' }), now);
	assert.equal(ours.description, 'waiting for your answer · < 1 min');
	assert.doesNotMatch(ours.tooltip, /Adopt Task/);
	assert.match(taskNode(task({ status: 'completed', result: { content: [], isError: false } }), now).tooltip, /Show Task Result opens the whole of it\.$/);
});

test("tasks tree: the result document is that of a completed task of ours, under a name of its own", () => {
	const done = task({ status: 'completed', result: { content: [{ type: 'text', text: 'built 12 packages' }], isError: false, truncated: { shownChars: 5, totalChars: 9, savedTo: '/tmp/r.txt' } } });
	assert.equal(
		taskResultDocument(done),
		'long_build on demo, task t1 — ok\n================================\n\nbuilt 12 packages\n\n(cut: 5 of 9 characters shown; the whole result is in /tmp/r.txt)\n',
	);
	assert.equal(taskResultDocument({ ...done, mine: undefined }), undefined, "another frontend's: the sidecar sends it no result, and none is made up");
	assert.equal(taskResultDocument(task({})), undefined, 'running');
	assert.equal(taskDocName(task({ server: 'my server', taskId: '../../x' })), 'tasks/my_server/.._.._x.txt');
});

test("tasks: a call's result document follows its task to the end; another frontend's end is not shown", async () => {
	const { TaskResultDoc } = await import('../src/taskResultDoc');
	const m = new ServersModel();
	const shown = new Map<string, string>();
	const follow = new TaskResultDoc(m, { update: (name, text) => void shown.set(name, text) });
	const base = { server: 'demo', tool: 'long_build', callId: 'c1', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:07Z', mine: true } as const;
	m.updateTask({ ...base, taskId: 't1', status: 'working', statusMessage: 'step 1/4' });
	follow.follow('result.md', { ...base, taskId: 't1', status: 'working' });
	assert.equal(shown.size, 0, 'nothing while it runs');
	m.updateTask({ ...base, taskId: 't1', status: 'completed', updatedAt: '2026-01-01T00:00:08Z', result: { content: [{ type: 'text', text: 'built' }], isError: false } });
	assert.match(shown.get('result.md') ?? '', /^long_build on demo, task t1 — ok\n=+\n\nbuilt\n/);
	// A task that failed says why; one adopted by another frontend is not ours to show.
	follow.follow('result.md', { ...base, taskId: 't2', status: 'working' });
	m.updateTask({ ...base, taskId: 't2', status: 'failed', updatedAt: '2026-01-01T00:00:09Z', error: 'disk full' });
	assert.match(shown.get('result.md') ?? '', /task t2 — failed\n=+\n\ndisk full\n/);
	shown.clear();
	follow.follow('result.md', { ...base, taskId: 't3', status: 'working' });
	m.updateTask({ ...base, taskId: 't3', status: 'completed', mine: undefined, updatedAt: '2026-01-01T00:00:10Z' });
	assert.equal(shown.size, 0);
	follow.dispose();
});

test("tasks: a cancelled task's row and tooltip do not say what it was doing as if it still did", () => {
	const n = taskNode(
		{ server: 'demo', taskId: 't9', tool: 'long_build', callId: 'c', status: 'cancelled', statusMessage: 'working: step 1/2', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:05Z', mine: true },
		Date.parse('2026-01-01T00:01:00Z'),
	);
	assert.equal(n.description, 'cancelled · 5 s');
	assert.ok(!/working/.test(n.tooltip), n.tooltip);
});
