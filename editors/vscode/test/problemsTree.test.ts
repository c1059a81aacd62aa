import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileWords, ServersModel } from '../../../frontend/src/model';
import { problemNodes } from '../src/views/problemsTree';
import { children } from '../src/views/tree';

test('problems: a short notice above the servers says where the first problem is; its tooltip that the last good config runs, and every problem', () => {
	const m = new ServersModel();
	m.setServers([{ name: 'demo', scope: 'user', type: 'local', state: 'connected', toolCount: 7 }]);
	m.setProblems({ path: '/h/.freecode/config.json', problems: [{ message: 'unknown key "typ"', line: 4, column: 7, key: 'mcp.servers[0].typ', severity: 'error' }] });
	const top = children(m);
	assert.deepEqual(
		top.map((n) => `${n.kind} ${n.label}`),
		['notice config.json: 1 problem', 'server demo'],
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
	m.setProblems({ path: '/h/.freecode/config.json', problems: [{ message: 'invalid character', line: 2, severity: 'error' }, { message: 'x', severity: 'error' }] });
	assert.deepEqual(problemNodes(m).map((n) => [n.label, n.description]), [
		['config.json: 2 problems', 'line 2, column 1: invalid character'],
	]);
	m.setProblems({ path: '/h/.freecode/config.json', problems: [] });
	assert.deepEqual(children(m), []);
});

test('problems: a settings file is named by its name', () => {
	assert.equal(fileWords('/p/.freecode/settings.local.json'), 'settings.local.json');
	assert.equal(fileWords('/p/.freecode/settings.json'), 'settings.json');
	assert.equal(fileWords('/h/.freecode/config.json'), 'the config');
	assert.equal(fileWords('C:\\Users\\u\\my-freecode.json'), 'the config');
});

test("problems: the sidecar's summary is the headline; a file with warnings only still loads", () => {
	const m = new ServersModel();
	m.setServers([{ name: 'demo', scope: 'user', type: 'local', state: 'connected', toolCount: 7 }]);
	m.setProblems({
		path: '/h/.freecode/config.json',
		problems: [{ message: 'unknown key "disabled" is ignored', line: 5, column: 9, severity: 'warning' }],
		summary: 'the config has 1 warning',
	});
	const [n] = problemNodes(m);
	assert.equal(n.label, 'config.json: 1 warning');
	assert.equal(n.description, 'line 5, column 9: unknown key "disabled" is ignored');
	assert.equal(n.icon.id, 'info');
	assert.ok(n.tooltip.includes('line 5, column 9: unknown key "disabled" is ignored (warning: ignored, the rest loads)'));
	assert.equal(m.summary().configBroken, false);
	m.setProblems({
		path: '/h/.freecode/config.json',
		problems: [{ message: 'invalid character', line: 7, column: 3, severity: 'error' }],
		lastGood: true,
		summary: 'the config has 1 problem; showing the last good one',
	});
	assert.deepEqual([problemNodes(m)[0].label, problemNodes(m)[0].description], ['config.json: 1 problem', 'line 7, column 3: invalid character']);
	assert.ok(problemNodes(m)[0].tooltip.startsWith('The config has 1 problem; showing the last good one\n'));
	assert.equal(m.summary().configBroken, true);
});
