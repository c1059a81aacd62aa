import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Logs, maxLines } from '../src/logs';

test('a log starts with the stderr tail once, then takes the lines as they come, escaped', () => {
	const l = new Logs();
	l.seed('a', ['booting', 'ready']);
	l.add({ name: 'a', level: 'warning', source: 'freecode', message: 'exited\u001b[31m', time: '2026-12-02T06:00:00Z' });
	l.seed('a', ['again']);
	const lines = l.of('a');
	assert.deepEqual(
		lines.map((x) => x.text),
		['booting', 'ready', 'exited\\x1b[31m'],
	);
	assert.equal(lines[2].level, 'warning');
	assert.match(lines[2].time, /^\d\d:\d\d:\d\d$/);
	assert.deepEqual(l.of('b'), []);
});

test('a log keeps its last lines only', () => {
	const l = new Logs();
	for (let i = 0; i < maxLines + 5; i++) l.add({ name: 'a', level: 'info', source: 'stderr', message: `line ${i}`, time: 'x' });
	const lines = l.of('a');
	assert.equal(lines.length, maxLines);
	assert.equal(lines[0].text, 'line 5');
	assert.equal(lines[0].time, '');
	l.forget('a');
	assert.deepEqual(l.of('a'), []);
});
