import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerStatus } from '../src/protocol.gen';
import { retryWords, serverRow, serverTooltip } from '../src/rows';
import { ago, since } from '../src/wording';
import { takesNoArguments } from '../src/schemaPrefill';

test('wording: how long ago, in the largest whole unit', () => {
	const now = Date.UTC(2026, 11, 2, 12, 0, 0);
	assert.deepEqual(
		[0, 59_000, 60_000, 5 * 60_000, 3600_000, 47 * 3600_000, 49 * 3600_000].map((d) => ago(now - d, now)),
		['just now', 'just now', '1 minute ago', '5 minutes ago', '1 hour ago', '47 hours ago', '2 days ago'],
	);
});

test('wording: "connected since" is local time and how long ago, not raw UTC', () => {
	const t = new Date(2026, 11, 2, 9, 5, 0); // local time
	const now = t.getTime() + 5 * 60_000;
	assert.equal(since(t.toISOString(), now), '09:05 (5 minutes ago)');
	assert.equal(since(t.toISOString(), t.getTime() + 30 * 3600_000), '2026-12-02 09:05 (30 hours ago)');
	assert.equal(since('not a time', now), 'not a time');
	const s: ServerStatus = { name: 'a', scope: 'user', type: 'local', state: 'connected', toolCount: 1, connectedAt: t.toISOString() };
	assert.ok(serverTooltip(s, now).split('\n').includes('connected since 09:05 (5 minutes ago)'));
});

test('tool runs: a tool with nothing to fill in runs at once', () => {
	assert.equal(takesNoArguments(undefined), true);
	assert.equal(takesNoArguments({ type: 'object' }), true);
	assert.equal(takesNoArguments({ type: 'object', properties: {} }), true);
	assert.equal(takesNoArguments({ type: 'object', properties: { a: { type: 'string' } } }), false);
	assert.equal(takesNoArguments({ type: 'object', required: ['a'] }), false);
	assert.equal(takesNoArguments({ type: 'object', additionalProperties: { type: 'string' } }), false);
	assert.equal(takesNoArguments({ $ref: '#/$defs/x', $defs: { x: { properties: { y: {} } } } }), false);
});

test('wording: between tries, a row says what went wrong and which try comes when', () => {
	const now = Date.UTC(2026, 11, 2, 12, 0, 0);
	const s: ServerStatus = {
		name: 'gh',
		scope: 'user',
		type: 'local',
		state: 'connecting',
		toolCount: 0,
		lastError: 'exited with code 3: error: GITHUB_TOKEN is not set',
		lastErrorKind: 'exited',
		exitCode: 3,
		retry: { attempt: 2, max: 6, nextAt: new Date(now + 3500).toISOString() },
	};
	assert.equal(serverRow(s, [], now).description, 'retrying 2/6 in 4 s: exited with code 3: error: GITHUB_TOKEN is not set');
	const tip = serverTooltip(s, now).split('\n');
	assert.ok(tip.includes('exit code: 3'));
	assert.ok(tip.includes('retrying 2/6 in 4 s'));
	assert.equal(retryWords({ attempt: 3, max: 6, nextAt: new Date(now - 10).toISOString() }, now), 'retrying 3/6');
});
