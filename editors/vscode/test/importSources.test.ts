import assert from 'node:assert/strict';
import { test } from 'node:test';
import { droppedServers, ownConfigToImport, ownConfigWords, vscodeSources, type Where } from '../src/importSources';
import { importConfirmation } from '../src/confirmations';

function where(existing: string[], over: Partial<Where> = {}): Where {
	return {
		globalStorage: '/d/user-data/User/globalStorage/freecode.freecode',
		home: '/home/me',
		platform: 'linux',
		env: {},
		folders: ['/w/app'],
		exists: (p) => existing.includes(p),
		...over,
	};
}

test("import: this editor's own mcp.json first, then the workspace's, then the usual places, only those that exist", () => {
	const all = ['/d/user-data/User/mcp.json', '/w/app/.vscode/mcp.json', '/home/me/.config/Code/User/mcp.json', '/home/me/.local/share/code-server/User/mcp.json'];
	assert.deepEqual(vscodeSources(where(all)), [
		{ label: "This editor's user MCP servers", path: '/d/user-data/User/mcp.json' },
		{ label: 'Workspace app', path: '/w/app/.vscode/mcp.json' },
		{ label: 'VS Code (desktop)', path: '/home/me/.config/Code/User/mcp.json' },
		{ label: 'code-server', path: '/home/me/.local/share/code-server/User/mcp.json' },
	]);
	assert.deepEqual(vscodeSources(where([])), []);
});

test('import: the desktop VS Code running is listed once, as this editor', () => {
	const desktop = where(['/home/me/.config/Code/User/mcp.json'], { globalStorage: '/home/me/.config/Code/User/globalStorage/freecode.freecode', folders: [] });
	assert.deepEqual(vscodeSources(desktop), [{ label: "This editor's user MCP servers", path: '/home/me/.config/Code/User/mcp.json' }]);
	const mac = where(['/Users/me/Library/Application Support/Code/User/mcp.json'], { home: '/Users/me', platform: 'darwin', folders: [] });
	assert.deepEqual(vscodeSources(mac).map((s) => s.label), ['VS Code (desktop)']);
	const xdg = where(['/x/data/code-server/User/mcp.json'], { env: { XDG_DATA_HOME: '/x/data' }, folders: [] });
	assert.deepEqual(vscodeSources(xdg).map((s) => s.label), ['code-server']);
});

test("import: FreeCode's config in another client's shape is offered, with the client the sidecar's problem names", () => {
	const cfg = '/home/me/.freecode/config.json';
	const vscodeShape = {
		path: cfg,
		problems: [
			{
				key: 'servers',
				message:
					'this is VS Code\'s mcp.json shape ("servers" at the top), which FreeCode does not read: …; `freecode mcp import vscode /home/me/.freecode/config.json` (in VS Code: FreeCode: Import MCP Servers…, then This Config File) turns this file into FreeCode\'s',
			},
		],
	};
	assert.deepEqual(ownConfigToImport([vscodeShape]), { path: cfg, client: 'vscode' });
	const claude = { path: cfg, problems: [{ key: 'mcpServers', message: "this is Claude's …; `freecode mcp import claude-desktop '/my dir/config.json'` …" }] };
	assert.deepEqual(ownConfigToImport([claude]), { path: cfg, client: 'claude-desktop' });
	// A project's mcp.servers object names no import: it is not the config.
	const project = { path: '/w/app/.freecode/settings.json', problems: [{ key: 'mcp.servers', message: 'want an array of server entries, each with a "name": […], not an object of servers by name' }] };
	const other = { path: cfg, problems: [{ key: 'mcp.servers[0].url', message: 'a remote server needs a url' }] };
	assert.equal(ownConfigToImport([project, other]), undefined);
	assert.equal(ownConfigToImport([]), undefined);
});

test('import: This Config File says whose shape the file is in before its path, which the picker may cut', () => {
	const kinds = [
		{ label: 'Claude Desktop', client: 'claude-desktop' },
		{ label: 'VS Code', client: 'vscode' },
	];
	const path = '/home/me/.freecode/config.json';
	assert.equal(ownConfigWords({ path, client: 'vscode' }, kinds), "in VS Code's shape, to convert to FreeCode's: /home/me/.freecode/config.json");
	assert.equal(ownConfigWords({ path, client: 'other' }, kinds), "in another client's shape, to convert to FreeCode's: /home/me/.freecode/config.json");
});

test('import: the servers that run now and that a pasted file no longer holds are named before the import stops them', () => {
	const preview = [
		"Would convert /h/.freecode/config.json from VS Code's shape to FreeCode's:",
		'  + vs-files (local)',
		'  = notes: already configured, skipped',
		'  ! bad name: skipped: invalid',
		'Dry run: 1 server would be added; nothing was written.',
	].join('\n');
	assert.deepEqual(droppedServers(['added', 'notes', 'vs-files', 'search'], preview), ['added', 'search']);
	assert.deepEqual(droppedServers([], preview), []);
	const c = importConfirmation('this config file', preview, ['added', 'search']);
	assert.match(c.detail, /^Running now but no longer in the file, which the paste replaced: added, search\. Importing keeps the file as it is, and they stop; to keep them, undo the paste first\.\n\n/);
	assert.doesNotMatch(importConfirmation('VS Code', preview).detail, /Running now/);
});
