import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartBudget } from '../src/restartPolicy';

test('restarts: five crashes in three minutes restart, the sixth does not', () => {
	let now = 0;
	const b = new RestartBudget(5, 180_000, () => now);
	const got: boolean[] = [];
	for (let i = 0; i < 6; i++) {
		got.push(b.crashed());
		now += 10_000;
	}
	assert.deepEqual(got, [true, true, true, true, true, false]);
});

test('restarts: crashes older than the window are forgotten', () => {
	let now = 0;
	const b = new RestartBudget(2, 60_000, () => now);
	assert.equal(b.crashed(), true);
	now = 30_000;
	assert.equal(b.crashed(), true);
	now = 70_000; // the first crash has left the window
	assert.equal(b.crashed(), true);
	assert.equal(b.recent, 2);
	now = 71_000;
	assert.equal(b.crashed(), false);
});

test('restarts: a restart the user asks for starts a new budget', () => {
	const b = new RestartBudget(1, 60_000, () => 0);
	assert.equal(b.crashed(), true);
	assert.equal(b.crashed(), false);
	b.reset();
	assert.equal(b.crashed(), true);
});
