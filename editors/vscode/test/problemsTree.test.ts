import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServersModel } from '../src/model';
import { fileWords, problemNodes } from '../src/views/problemsTree';
import { children } from '../src/views/tree';

test('problems: a notice above the servers says the last good config runs, and where the problem is', () => {
	const m = new ServersModel();
	m.setServers([{ name: 'demo', scope: 'user', type: 'local', state: 'connected', toolCount: 7 }]);
	m.setProblems('/h/.freecode/config.json', [{ message: 'unknown key "typ"', line: 4, column: 7, key: 'mcp.servers[0].typ' }]);
	const top = children(m);
	assert.deepEqual(
		top.map((n) => `${n.kind} ${n.label}`),
		['notice The config has 1 problem; showing the last good one', 'server demo'],
	);
	const [n] = problemNodes(m);
	assert.equal(n.description, 'line 4, column 7: unknown key "typ"');
	assert.equal(n.line, 4);
	assert.equal(n.column, 7);
	assert.equal(n.contextValue, 'configProblems');
	assert.equal(
		n.tooltip,
		[
			'The config has 1 problem; showing the last good one',
			'/h/.freecode/config.json',
			'',
			'line 4, column 7: mcp.servers[0].typ: unknown key "typ"',
			'',
			'Click to go to the first one.',
		].join('\n'),
	);
});

test('problems: with no server loaded there is no last good one; fixed, the notice goes', () => {
	const m = new ServersModel();
	m.setProblems('/h/.freecode/config.json', [{ message: 'invalid character', line: 2 }, { message: 'x' }]);
	assert.deepEqual(problemNodes(m).map((n) => [n.label, n.description]), [
		['The config has 2 problems; fix it to load its servers', 'line 2, column 1: invalid character'],
	]);
	m.setProblems('/h/.freecode/config.json', []);
	assert.deepEqual(children(m), []);
});

test('problems: a settings file is named by its name', () => {
	assert.equal(fileWords('/p/.freecode/settings.local.json'), 'settings.local.json');
	assert.equal(fileWords('/p/.freecode/settings.json'), 'settings.json');
	assert.equal(fileWords('/h/.freecode/config.json'), 'the config');
	assert.equal(fileWords('C:\\Users\\u\\my-freecode.json'), 'the config');
});
