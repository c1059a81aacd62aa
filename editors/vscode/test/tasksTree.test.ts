import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServersModel } from '../src/model';
import type { TaskInfo } from '../src/protocol';
import { elapsed, runningFor, taskNode, taskNodes, tasksNodes } from '../src/views/tasksTree';
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
	...over,
});

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
		['long_build (demo)', 'working · 1 min · step 2/4', 'task live'],
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
	assert.match(done.tooltip, /\nbuild passed$/);
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
