import assert from 'node:assert/strict';
import { test } from 'node:test';
import { message } from '../src/cli';

test('cli: a notification gets the CLI line without its terminal mark', () => {
	assert.deepEqual(
		['✓ Added 1 server.\n', '✗ Server "fs" failed', '  Dry run: 0 servers would be added', 'plain'].map(message),
		['Added 1 server.', 'Server "fs" failed', 'Dry run: 0 servers would be added', 'plain'],
	);
});
