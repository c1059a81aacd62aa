import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addedWords, cliError, message, outcome, runCli } from '../src/cli';
import type { Settings } from '../src/settings';

test('cli: a notification gets the CLI line without its terminal mark', () => {
	assert.deepEqual(
		['✓ Added 1 server.\n', '✗ Server "fs" failed', '  Dry run: 0 servers would be added', 'plain'].map(message),
		['Added 1 server.', 'Server "fs" failed', 'Dry run: 0 servers would be added', 'plain'],
	);
});

test('cli: an import that went well is said by its ✓ line, not by the secrets note after it', () => {
	// As `freecode mcp import vscode ~/.freecode/config.json` says it for VS Code's mcp.json with a password input.
	const out = [
		"Converting /home/me/.freecode/config.json from VS Code's shape to FreeCode's:",
		'  + vs-notes (local)',
		'  + vs-files (local)',
		'✓ Added 2 servers.',
		'The servers read 1 secret not set yet (kept out of the config: in the OS keychain, else ~/.freecode/auth):',
		'  notes-token (Notes API token, for vs-notes): freecode secret set notes-token',
		'Until each is set, the servers that read it do not start.',
		'',
	].join('\n');
	assert.equal(outcome(out), 'Added 2 servers.');
	assert.equal(outcome('Added 1 server.\n'), 'Added 1 server.');
	assert.equal(outcome(''), '');
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

test('cli: an added server is said in the status bar with its config file by name, not its whole path', () => {
	assert.equal(addedWords('✓ Added local server "notes" to /home/me/.freecode/config.json\n  command: x\n'), 'Added local server "notes" to config.json');
	assert.equal(addedWords('✓ Added remote server "gh" to C:\\Users\\me\\.freecode\\config.json\n'), 'Added remote server "gh" to config.json');
	assert.equal(addedWords('✓ Added local server "x"\n'), 'Added local server "x"');
});

test("cli: input goes to the CLI's standard input, not its command line", { skip: process.platform === 'win32' }, async () => {
	const dir = mkdtempSync(join(tmpdir(), 'freecode-cli-'));
	const fake = join(dir, 'freecode');
	writeFileSync(fake, '#!/bin/sh\necho "args: $*"\ncat\nexit 3\n');
	chmodSync(fake, 0o755);
	const s: Settings = { serverPath: '', serverPathFromSetting: false, cliPath: fake, trace: 'off', argumentChars: 0, problems: [] };
	const r = await runCli(s, ['mcp', 'install', 'x', '--values-stdin'], '{"KEY": "s3cret"}');
	assert.deepEqual(r, { code: 3, stdout: 'args: mcp install x --values-stdin\n{"KEY": "s3cret"}', stderr: '' });
});
