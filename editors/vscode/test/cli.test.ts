import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliError, message } from '../src/cli';

test('cli: a notification gets the CLI line without its terminal mark', () => {
	assert.deepEqual(
		['✓ Added 1 server.\n', '✗ Server "fs" failed', '  Dry run: 0 servers would be added', 'plain'].map(message),
		['Added 1 server.', 'Server "fs" failed', 'Dry run: 0 servers would be added', 'plain'],
	);
});

test("cli: a failure's notification is what the command said, without its prefix and the config's warnings", () => {
	// As `freecode mcp add z local -- ls` says it with a config that has a misspelt key.
	const stderr =
		'warning: /tmp/w.json:1:51: mcp.servers[0].timout: server "z": unknown key "timout" is ignored; did you mean "timeout"?\n' +
		'freecode: a server named "z" is already in /tmp/w.json (remove it first, or pick another name)\n';
	assert.equal(cliError({ code: 1, stdout: '', stderr }), 'A server named "z" is already in /tmp/w.json (remove it first, or pick another name)');
	assert.equal(cliError({ code: 1, stdout: 'freecode: no such server\n', stderr: '' }), 'No such server');
	// Nothing but warnings: they are what there is to say.
	assert.equal(cliError({ code: 1, stdout: '', stderr: 'warning: x\n' }), 'Warning: x');
});
