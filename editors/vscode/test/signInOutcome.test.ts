import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerStatus } from '../../../frontend/src/protocol.gen';
import { SHOW_LOG, signInFailure, signInOutcome, TRY_AGAIN, type SignInUI } from '../src/signInOutcome';

const failed: ServerStatus = {
	name: 'gh',
	scope: 'user',
	type: 'remote',
	state: 'needsAuth',
	toolCount: 0,
	lastError: 'sign-in required: the sign-in did not complete: token exchange failed: oauth2: "invalid_target" "resource differs"',
};

/** fakeUI answers the notification with pick, and records what was shown and done. */
function fakeUI(pick: string | undefined) {
	const seen = { shown: [] as { message: string; buttons: string[] }[], retries: 0, logs: 0 };
	const ui: SignInUI = {
		showError: async (message, ...buttons) => {
			seen.shown.push({ message, buttons });
			return pick;
		},
		retry: async () => void seen.retries++,
		showLog: () => void seen.logs++,
	};
	return { ui, seen };
}

test('sign-in: one that failed is a notification saying why, Try Again first', async () => {
	const { ui, seen } = fakeUI(TRY_AGAIN);
	await signInOutcome(failed, ui);
	assert.equal(seen.shown.length, 1);
	assert.equal(seen.shown[0].message, `Signing in to gh failed: ${failed.lastError}`);
	assert.deepEqual(seen.shown[0].buttons, [TRY_AGAIN, SHOW_LOG]);
	assert.equal(seen.retries, 1, 'Try Again starts the sign-in again');
	assert.equal(seen.logs, 0);
});

test('sign-in: Show Log shows the log, and closing the notification does nothing', async () => {
	const log = fakeUI(SHOW_LOG);
	await signInOutcome(failed, log.ui);
	assert.deepEqual([log.seen.retries, log.seen.logs], [0, 1]);
	const closed = fakeUI(undefined);
	await signInOutcome(failed, closed.ui);
	assert.deepEqual([closed.seen.retries, closed.seen.logs], [0, 0]);
});

test('sign-in: one that signed in says nothing here (the status bar does)', async () => {
	const { ui, seen } = fakeUI(TRY_AGAIN);
	await signInOutcome({ ...failed, state: 'connected', lastError: undefined }, ui);
	assert.equal(seen.shown.length, 0);
	assert.equal(signInFailure({ ...failed, state: 'connecting' }), undefined);
});

test('sign-in: the reason is one printable line, without a reason said so', () => {
	const n = signInFailure({ ...failed, lastError: 'refused\n\u001b[31mred' });
	assert.equal(n?.message, 'Signing in to gh failed: refused \\x1b[31mred');
	assert.equal(signInFailure({ ...failed, lastError: undefined })?.message, 'Signing in to gh failed: no reason given');
});
