import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promptDoc, resourceDoc } from '../../../frontend/src/extrasText';
import type { GetPromptResult, PromptInfo, ReadResourceResult, ResourceInfo, ServerStatus } from '../../../frontend/src/protocol.gen';
import { ServersModel } from '../../../frontend/src/model';
import { groupChildren } from '../src/views/extrasTree';
import { serverChildren, serverNodes } from '../src/views/tree';

const fixtures = join(__dirname, '..', '..', '..', '..', 'frontend', 'test', 'fixtures');
const load = <T>(f: string): T[] => JSON.parse(readFileSync(join(fixtures, f), 'utf8'));
const resources = load<ResourceInfo>('ResourceInfo.json');
const prompts = load<PromptInfo>('PromptInfo.json');

const st = (name: string, over: Partial<ServerStatus> = {}): ServerStatus => ({
	name,
	scope: 'user',
	type: 'local',
	state: 'connected',
	toolCount: 0,
	...over,
});

/** tree is the whole view as lines, groups expanded. */
function tree(m: ServersModel): string[] {
	const out: string[] = [];
	for (const s of serverNodes(m)) {
		out.push(`${s.label}${s.expandable ? ' ▾' : ''}`);
		for (const c of serverChildren(m, s.name)) {
			out.push(`  ${c.icon.id} ${c.label} — ${c.description} [${c.contextValue}]`);
			if (c.kind === 'group') {
				for (const g of groupChildren(m, c.server, c.group)) out.push(`    ${g.icon.id} ${g.label} — ${g.description} [${g.contextValue}]`);
			}
		}
	}
	return out;
}

test('tree: a server lists its resources and prompts after its tools, in groups, only when it has some', () => {
	const m = new ServersModel();
	m.setServers([st('everything'), st('fs')]);
	assert.deepEqual(tree(m), ['everything', 'fs']);
	m.setResources('everything', resources.filter((r) => r.server === 'everything'));
	m.setPrompts(
		'everything',
		prompts.filter((p) => p.server === 'everything'),
	);
	m.setTools([{ id: 'mcp__everything__echo', server: 'everything', name: 'echo', description: '', readOnly: true, inputSchema: {} }]);
	assert.deepEqual(tree(m), [
		'everything ▾',
		'  eye echo — read-only [tool read-only]',
		'  files Resources — 1 [group resources]',
		'    file Architecture — text/markdown [resource]',
		'  comment-discussion Prompts — 2 [group prompts]',
		'    comment Arguments prompt — city*, state [prompt]',
		'    comment simple-prompt —  [prompt]',
		'fs',
	]);
	const [res] = groupChildren(m, 'everything', 'resources');
	assert.equal(res.kind === 'resource' && res.uri, 'demo://resource/static/document/architecture.md');
	assert.equal(
		res.tooltip,
		'Architecture\ndemo://resource/static/document/architecture.md\ntext/markdown\n\nHow the server is built',
	);
	const [args] = groupChildren(m, 'everything', 'prompts');
	assert.equal(args.tooltip, 'Arguments prompt\n\nA prompt with arguments\ncity (required): Name of the city\nstate: Name of the state');

	// A server that stops has none; one that leaves the config takes them along.
	m.setResources('everything', []);
	assert.deepEqual(tree(m).slice(0, 3), ['everything ▾', '  eye echo — read-only [tool read-only]', '  comment-discussion Prompts — 2 [group prompts]']);
	m.updateServer(st('everything', { state: 'removed' }));
	m.updateServer(st('everything'));
	assert.deepEqual(tree(m), ['everything', 'fs']);
});

test('tree: a remote server can sign out; a local one has no sign-in', () => {
	const m = new ServersModel();
	m.setServers([st('gh', { type: 'remote', state: 'needsAuth' }), st('fs')]);
	assert.deepEqual(
		serverNodes(m).map((n) => n.contextValue),
		[
			'server state:connected scope:user can:stop can:restart can:disable can:remove',
			'server state:needsAuth scope:user remote can:disable can:remove',
		],
	);
});

test('docs: a resource opens as its text, named after its URI, in its language', () => {
	const [text, blob] = load<ReadResourceResult>('ReadResourceResult.json');
	assert.deepEqual(resourceDoc('everything', 'demo://resource/static/document/architecture.md', text), {
		name: 'resources/everything/architecture.md',
		content: '# Architecture',
	});
	assert.deepEqual(resourceDoc('everything', 'demo://resource/dynamic/blob/1', blob), {
		name: 'resources/everything/1.txt',
		content: '[demo://resource/dynamic/blob/1: 5 bytes of application/octet-stream, not shown]',
	});
	const two: ReadResourceResult = {
		contents: [
			{ uri: 'x://a', text: 'one' },
			{ uri: 'x://b', mimeType: 'application/json', text: '{}' },
		],
	};
	assert.deepEqual(resourceDoc('s/../x', 'x://dir/../../etc/passwd?q=1', two), {
		name: 'resources/s_.._x/passwd.txt',
		content: '--- x://a\none\n\n--- x://b (application/json)\n{}',
	});
	assert.equal(resourceDoc('s', 'x://e', { contents: [] }).content, '(the resource is empty)');
});

test('docs: a prompt opens as Markdown, one section per message', () => {
	const [weather] = load<GetPromptResult>('GetPromptResult.json');
	assert.deepEqual(promptDoc('everything', 'args-prompt', weather, { city: 'Paris' }), {
		name: 'prompts/everything/args-prompt.md',
		content: [
			'# args-prompt (everything)',
			'',
			'Weather in Paris',
			'',
			'Arguments: city="Paris"',
			'',
			'## user',
			'',
			"What's weather in Paris?",
			'',
		].join('\n'),
	});
	const mixed: GetPromptResult = {
		messages: [
			{ role: 'user', content: { type: 'image', data: 'x', mimeType: 'image/png' } },
			{ role: 'assistant', content: { type: 'resource', resource: { uri: 'x://r', text: 'body' } } },
		],
	};
	assert.equal(
		promptDoc('s', 'p', mixed, {}).content,
		['# p (s)', '', '## user', '', '[image image/png]', '', '## assistant', '', 'Resource x://r:', '', 'body', ''].join('\n'),
	);
});
