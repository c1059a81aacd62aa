// The extension in a real VS Code: code-server on 127.0.0.1 with the .vsix
// installed, driven by Playwright through Debian's headless Chromium, in a
// throw-away HOME, XDG dirs, user data and extensions dir. Screenshots go to
// --out; look at them.
//
//   node24 test/e2e/run.mjs --vsix F.vsix --bin BIN --out DIR --code-server DIR [--oauth-server PROGRAM] [--registry-server PROGRAM] [--npm DIR] [--scenario NAME]... [--keep]
//
// Scenarios (all by default):
//   sidecar-missing  freecode.serverPath points at nothing: the view explains, the status bar says so.
//   cli              no server configured: the welcome view offers Add and Import; Add MCP Server checks
//                    the name before writing, writes through the bundled freecode CLI, and the server
//                    connects; Import MCP Servers previews a Claude Desktop config, Enter (the dialog's
//                    default button) imports nothing, and Import imports it.
//   demo             the demo server connected with its tools; Run Tool… on the destructive delete_file
//                    shows the permission dialog; Deny shows the denial; Allow Once runs it (the file is
//                    really gone); editing the config in the editor adds a server to the tree, no reload;
//                    stopped, then removed from the config, it leaves the tree.
//   manage           issue 22: command + args, a missing and an exiting command, a just-added failure's
//                    notification, Show Log, Disable and Remove from the view, the palette's per-server
//                    actions, a broken config in the view and status bar, three tool runs in one pair of
//                    editors, FreeCode in MCP: List Servers.
//   signin           issue 17: Sign In from the view to a 2026-07-28-only server behind OAuth
//                    (--oauth-server: internal/oauthtest/cmd/oauth-newest-server), the consent completed
//                    by HTTP, the server connecting, and a run of its tool.
//   registry         issue 34 (registry.mjs): Browse MCP Registry… against the fixture registry
//                    (--registry-server: internal/registry/registrytest/cmd/registry-fixture-server): the
//                    search as one types, the pick's values asked (the secret unseen), the install pinned,
//                    the secret by reference only, the status bar and the new row.
//   review           issue 35, item 5 (review.mjs): a tool's long description gains a sentence; the notice's
//                    primary button is Review Changes, which opens the diff editor with the sentence on a
//                    line of its own; the question after it has Reject All before Accept All.
//   vscode-chat      issue 22, issue 35 item 7: FreeCode's servers in VS Code's MCP: List Servers, one
//                    each, served by the extension's sidecar (McpHttpServerDefinition; else the stdio
//                    fallback, and the log says which), their tools discovered and grouped under each
//                    server in the chat's tools picker (Configure Tools…); no second demo-server runs.
//   real-apps        issue 35 (realApps.mjs): the MCP Apps project's basic-vanillajs, budget-allocator and
//                    system-monitor servers (--npm: interop/node_modules): their views render, call through
//                    the permission rules, take the editor's theme and its changes, open links through VS
//                    Code's question.
//
// Run it with Node 24 (code-server's own); playwright-core comes from the
// extension's node_modules. Waits have generous timeouts for the external
// processes and nothing else; everything listens on loopback only.

import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { scenarioApps } from './apps.mjs';
import { scenarioRealApps } from './realApps.mjs';
import { scenarioRegistry } from './registry.mjs';
import { scenarioReview } from './review.mjs';
import { scenarioTasks } from './tasks.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const extDir = path.resolve(here, '..', '..');
const { chromium } = createRequire(path.join(extDir, 'package.json'))('playwright-core');

// Timeouts for things outside this script: a cold code-server start on a
// busy 2-core machine, the sidecar connecting a server, a UI element
// appearing after a notification.
const startTimeoutMs = 180_000;
const uiTimeoutMs = 60_000;

function parseArgs(argv) {
	const a = { scenarios: [], keep: false, chromium: '/usr/bin/chromium' };
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i];
		const v = () => {
			if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
			return argv[++i];
		};
		if (k === '--vsix') a.vsix = path.resolve(v());
		else if (k === '--bin') a.bin = path.resolve(v());
		else if (k === '--out') a.out = path.resolve(v());
		else if (k === '--code-server') a.codeServer = path.resolve(v());
		else if (k === '--chromium') a.chromium = v();
		else if (k === '--oauth-server') a.oauthServer = path.resolve(v());
		else if (k === '--npm') a.npm = path.resolve(v());
		else if (k === '--registry-server') a.registryServer = path.resolve(v());
		else if (k === '--scenario') a.scenarios.push(v());
		else if (k === '--keep') a.keep = true;
		else throw new Error(`unknown argument ${k}`);
	}
	for (const need of ['vsix', 'out', 'codeServer']) {
		if (!a[need]) throw new Error(`--${need === 'codeServer' ? 'code-server' : need} is required`);
	}
	if (a.scenarios.length === 0) a.scenarios = ['sidecar-missing', 'cli', 'demo', 'manage', 'apps', 'tasks', 'review', 'vscode-chat', ...(a.oauthServer ? ['signin'] : []), ...(a.registryServer ? ['registry'] : []), ...(a.npm ? ['real-apps'] : [])];
	return a;
}

const args = parseArgs(process.argv.slice(2));

// code-servers still running, by process group: a driver stopped from
// outside (make's timeout, ^C) takes them, their extension hosts and the
// sidecars with it.
const running = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
	process.on(sig, () => {
		for (const pid of running) {
			try {
				process.kill(-pid, 'SIGKILL');
			} catch {}
		}
		process.exit(1);
	});
}
fs.mkdirSync(args.out, { recursive: true });
const results = [];

function log(msg) {
	process.stdout.write(`e2e: ${msg}\n`);
}

async function freePort() {
	const srv = net.createServer();
	srv.listen(0, '127.0.0.1');
	await once(srv, 'listening');
	const { port } = srv.address();
	srv.close();
	await once(srv, 'close');
	return port;
}

/**
 * Sandbox is one scenario's throw-away world: HOME, XDG dirs, VS Code's dirs
 * and a workspace folder. machineSettings go where code-server reads
 * machine-scoped settings (the freecode.* paths are machine settings, so a
 * workspace cannot choose the binary): its Machine folder, as VS Code's
 * remote settings are.
 */
function sandbox(name, machineSettings) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), `freecode-e2e-${name}-`));
	const d = {
		root,
		home: path.join(root, 'home'),
		userData: path.join(root, 'user-data'),
		extensions: path.join(root, 'extensions'),
		workspace: path.join(root, 'workspace'),
	};
	for (const p of Object.values(d)) fs.mkdirSync(p, { recursive: true });
	for (const x of ['config', 'data', 'cache', 'state', 'runtime']) fs.mkdirSync(path.join(root, 'xdg', x), { recursive: true, mode: 0o700 });
	fs.mkdirSync(path.join(d.userData, 'User'), { recursive: true });
	fs.writeFileSync(
		path.join(d.userData, 'User', 'settings.json'),
		JSON.stringify(
			{
				'workbench.startupEditor': 'none',
				'workbench.tips.enabled': false,
				'workbench.colorTheme': 'Default Dark Modern',
				'workbench.secondarySideBar.defaultVisibility': 'hidden',
				'security.workspace.trust.enabled': false,
				'telemetry.telemetryLevel': 'off',
				'extensions.autoUpdate': false,
				'extensions.autoCheckUpdates': false,
				'extensions.ignoreRecommendations': true,
				'update.mode': 'none',
				'chat.disableAIFeatures': true,
				// Text is put into editors as a person would type it; these
				// would add brackets, quotes and indentation of their own.
				'editor.autoClosingBrackets': 'never',
				'editor.autoClosingQuotes': 'never',
				'editor.autoSurround': 'never',
				'editor.autoIndent': 'none',
				'editor.formatOnType': false,
				'editor.quickSuggestions': { other: false, comments: false, strings: false },
				'editor.suggestOnTriggerCharacters': false,
				'editor.acceptSuggestionOnEnter': 'off',
			},
			null,
			2,
		),
	);
	fs.mkdirSync(path.join(d.userData, 'Machine'), { recursive: true });
	fs.writeFileSync(path.join(d.userData, 'Machine', 'settings.json'), JSON.stringify(machineSettings, null, 2));
	d.env = {
		PATH: process.env.PATH,
		LANG: 'C.UTF-8',
		HOME: d.home,
		XDG_CONFIG_HOME: path.join(root, 'xdg', 'config'),
		XDG_DATA_HOME: path.join(root, 'xdg', 'data'),
		XDG_CACHE_HOME: path.join(root, 'xdg', 'cache'),
		XDG_STATE_HOME: path.join(root, 'xdg', 'state'),
		XDG_RUNTIME_DIR: path.join(root, 'xdg', 'runtime'),
		TMPDIR: root,
	};
	return d;
}

function codeServerArgs(d) {
	return [
		path.join(args.codeServer, 'out', 'node', 'entry.js'),
		'--auth',
		'none',
		'--disable-telemetry',
		'--disable-update-check',
		'--disable-workspace-trust',
		'--disable-getting-started-override',
		'--user-data-dir',
		d.userData,
		'--extensions-dir',
		d.extensions,
	];
}

function installVsix(d) {
	const r = spawnSync(process.execPath, [...codeServerArgs(d), '--install-extension', args.vsix], {
		env: d.env,
		encoding: 'utf8',
		timeout: startTimeoutMs,
	});
	fs.writeFileSync(path.join(args.out, `${d.name}-install.log`), `${r.stdout}\n${r.stderr}`);
	if (r.status !== 0) throw new Error(`installing ${args.vsix} failed (exit ${r.status}): ${r.stderr || r.stdout}`);
	const installed = fs.readdirSync(d.extensions).filter((x) => x.startsWith('freecode.freecode-'));
	if (installed.length !== 1) throw new Error(`the extension is not in ${d.extensions}: ${fs.readdirSync(d.extensions)}`);
	log(`installed ${installed[0]}`);
}

/** startCodeServer starts code-server and resolves its URL once it says it listens. */
async function startCodeServer(d) {
	const port = await freePort();
	const logFile = fs.createWriteStream(path.join(args.out, `${d.name}-code-server.log`));
	const child = spawn(process.execPath, [...codeServerArgs(d), '--bind-addr', `127.0.0.1:${port}`, d.workspace], {
		env: d.env,
		cwd: d.workspace,
		detached: true, // its own process group: the extension host and the sidecar go with it
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	d.child = child;
	running.add(child.pid);
	child.once('exit', () => running.delete(child.pid));
	child.stdout.pipe(logFile, { end: false });
	child.stderr.pipe(logFile, { end: false });
	await new Promise((resolve, reject) => {
		let seen = '';
		const timer = setTimeout(() => reject(new Error(`code-server did not listen within ${startTimeoutMs} ms`)), startTimeoutMs);
		const onData = (b) => {
			seen += b.toString();
			if (/HTTP server listening on/.test(seen)) {
				clearTimeout(timer);
				child.stdout.off('data', onData);
				resolve();
			}
		};
		child.stdout.on('data', onData);
		child.once('exit', (code) => {
			clearTimeout(timer);
			reject(new Error(`code-server exited (${code}) before listening; see ${d.name}-code-server.log`));
		});
	});
	log(`code-server listening on 127.0.0.1:${port}`);
	return `http://127.0.0.1:${port}/?folder=${encodeURIComponent(d.workspace)}`;
}

async function stopCodeServer(d) {
	if (!d.child || d.child.exitCode !== null) return;
	const exited = once(d.child, 'exit');
	try {
		process.kill(-d.child.pid, 'SIGTERM');
	} catch {
		return;
	}
	const timer = setTimeout(() => {
		try {
			process.kill(-d.child.pid, 'SIGKILL');
		} catch {}
	}, 10_000);
	await exited;
	clearTimeout(timer);
}

// Playwright gives each launch a fresh profile of its own (a temporary
// --user-data-dir), removed when the browser closes.
async function openBrowser() {
	const browser = await chromium.launch({
		executablePath: args.chromium,
		headless: true,
		args: [
			'--no-sandbox',
			'--disable-gpu',
			'--disable-quic',
			'--no-first-run',
			'--disable-background-networking',
			'--disable-component-update',
			'--disable-sync',
		],
	});
	const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
	page.setDefaultTimeout(uiTimeoutMs);
	return { browser, page };
}

async function shot(page, name) {
	const file = path.join(args.out, `${name}.png`);
	await page.screenshot({ path: file });
	log(`screenshot ${file}`);
}

/** step runs one check, recording it; a failing step takes a screenshot and ends the scenario. */
async function step(page, name, fn) {
	try {
		await fn();
		results.push({ name, ok: true });
		log(`ok   ${name}`);
	} catch (e) {
		results.push({ name, ok: false, error: e });
		log(`FAIL ${name}: ${e.message.split('\n')[0]}`);
		await page
			.screenshot({ path: path.join(args.out, `failed-${name.replace(/[^A-Za-z0-9]+/g, '-')}.png`) })
			.catch(() => {});
		throw e;
	}
}

async function openWorkbench(page, url) {
	await page.goto(url);
	await page.locator('.monaco-workbench').waitFor({ timeout: startTimeoutMs });
	await page.locator('.statusbar').waitFor({ timeout: startTimeoutMs });
}

async function runCommand(page, title) {
	await page.keyboard.press('F1');
	const input = page.locator('.quick-input-widget input');
	await input.waitFor();
	// The palette's filter does not match a typed "…"; the row still shows it.
	await input.fill(`>${title.replace(/…$/, '')}`);
	// Enter runs the focused row: wait until the filter has put the
	// command there, not only somewhere in the list.
	await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: title }).first().waitFor();
	await page.keyboard.press('Enter');
}

/**
 * notified waits for a notification saying text (a string or a RegExp). VS
 * Code now and then files a notification in its notification center without
 * toasting it (and hides a toast after a while): what a step checks is that
 * the notification was made, so the center is looked in too.
 */
async function notified(page, text, timeout = uiTimeoutMs) {
	const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
	if (await toast.waitFor({ timeout: Math.min(timeout, 10000) }).then(() => true, () => false)) return;
	await runCommand(page, 'Notifications: Show Notifications');
	await page.locator('.notifications-center .notification-list-item-message', { hasText: text }).first().waitFor({ timeout });
	log(`the notification ${text} is in the notification center, not toasted`);
	await page.keyboard.press('Escape');
}

async function openServersView(page) {
	await page.locator('.activitybar [aria-label^="FreeCode"]').first().click();
	// A container with one view shows the view's name in its own title.
	await page.locator('.sidebar .composite.title', { hasText: 'MCP Servers' }).waitFor();
}

/** treeRow is the MCP Servers row whose label is label. */
function treeRow(page, label) {
	return page.locator('.pane-body .monaco-list-row').filter({
		has: page.locator('.label-name', { hasText: new RegExp(`^${label}$`) }),
	});
}

/**
 * treeQuiet waits until the side bar's DOM has not changed for quietMs (at
 * most maxMs): the tree is not being redrawn.
 */
async function treeQuiet(page, quietMs = 500, maxMs = 10000) {
	await page.evaluate(
		([quiet, max]) =>
			new Promise((resolve) => {
				const root = document.querySelector('.sidebar') ?? document.body;
				let timer;
				const done = () => {
					obs.disconnect();
					clearTimeout(cap);
					resolve();
				};
				const obs = new MutationObserver(() => {
					clearTimeout(timer);
					timer = setTimeout(done, quiet);
				});
				obs.observe(root, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['class', 'aria-label'] });
				timer = setTimeout(done, quiet);
				const cap = setTimeout(done, max);
			}),
		[quietMs, maxMs],
	);
}

/**
 * rowAction clicks one of a tree row's inline actions (by the start of its
 * label), which show while the row is hovered. A redraw of the tree (a
 * server's tools arriving, a status changing) moves rows from under the
 * pointer and hides their actions again, and VS Code runs an action
 * clicked during one without its row: so the click waits for the tree to
 * be quiet, and the hover is made again until the click can land.
 */
async function rowAction(page, row, name) {
	const action = row.locator(`.actions .action-label[aria-label^="${name}"]`);
	const deadline = Date.now() + uiTimeoutMs;
	for (;;) {
		await treeQuiet(page);
		await row.hover();
		try {
			await action.click({ timeout: 3000 });
			return;
		} catch (e) {
			if (Date.now() > deadline) throw e;
		}
	}
}

async function replaceEditorText(page, text) {
	// The editor of the active group: the one the last command opened.
	const editor = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
	await editor.click();
	await page.keyboard.press('Control+A');
	await page.keyboard.press('Delete');
	await page.keyboard.insertText(text);
}

/**
 * inVSCode runs body against a fresh code-server with the .vsix installed:
 * prepare writes what the scenario needs into the sandbox first; everything
 * is stopped and removed afterwards (kept with --keep).
 */
async function inVSCode(name, machineSettings, prepare, body) {
	const d = sandbox(name, machineSettings);
	d.name = name;
	let browser;
	try {
		await prepare(d);
		installVsix(d);
		const url = await startCodeServer(d);
		const opened = await openBrowser();
		browser = opened.browser;
		await step(opened.page, 'workbench opens', () => openWorkbench(opened.page, url));
		await body(opened.page, d);
	} finally {
		await browser?.close();
		await stopCodeServer(d);
		// A server the sidecar stops may still be writing its files: retried.
		if (!args.keep) fs.rmSync(d.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
	}
}

async function scenarioSidecarMissing() {
	const settings = { 'freecode.serverPath': '/nonexistent/freecode-e2e/freecode-serve' };
	await inVSCode('sidecar-missing', settings, () => {}, async (page) => {
		await step(page, 'MCP Servers view opens', () => openServersView(page));
		await step(page, 'the view explains that the sidecar is missing', async () => {
			await page.getByText('FreeCode could not find its sidecar').waitFor();
			await page.getByRole('button', { name: 'Open Settings' }).waitFor();
			await page.getByRole('button', { name: 'Show Sidecar Log' }).waitFor();
		});
		await step(page, 'the status bar shows the error', async () => {
			await page.locator('.statusbar-item.error-kind', { hasText: 'MCP' }).waitFor();
		});
		await shot(page, 'sidecar-missing');
		await step(page, 'Show Sidecar Log says where it looked', async () => {
			await page.getByRole('button', { name: 'Show Sidecar Log' }).click();
			await page.getByText('freecode.serverPath is /nonexistent/freecode-e2e/freecode-serve, and there is no file there.').waitFor();
		});
		await shot(page, 'sidecar-missing-log');
	});
}

async function quickPick(page, text) {
	const input = page.locator('.quick-input-widget input');
	await input.waitFor();
	await input.fill(text);
	await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: text }).first().waitFor();
	await page.keyboard.press('Enter');
}

async function scenarioCli() {
	if (!args.bin) throw new Error('the cli scenario needs --bin (the directory with demo-server)');
	const demo = path.join(args.bin, 'demo-server');
	if (!fs.existsSync(demo)) throw new Error(`no ${demo}: run make build`);
	// No freecode.* setting: the sidecar and the CLI are the ones in the .vsix.
	let configPath;
	const config = () => (fs.existsSync(configPath) ? fs.readFileSync(configPath, 'utf8') : '');
	const prepare = (d) => {
		configPath = path.join(d.home, '.freecode', 'config.json');
		// Claude Desktop's file where the CLI looks for it: the XDG config dir.
		const claude = path.join(d.env.XDG_CONFIG_HOME, 'Claude', 'claude_desktop_config.json');
		fs.mkdirSync(path.dirname(claude), { recursive: true });
		const servers = { imported: { command: demo, args: ['--name', 'imported'] } };
		fs.writeFileSync(claude, JSON.stringify({ mcpServers: servers }, null, 2));
	};
	await inVSCode('cli', {}, prepare, async (page) => {
		await step(page, 'with no server configured, the view offers Add and Import', async () => {
			await openServersView(page);
			await page.getByText('No MCP server is configured yet.').waitFor();
			await page.getByRole('button', { name: 'Add MCP Server', exact: true }).waitFor();
			await page.getByRole('button', { name: 'Import MCP Servers', exact: true }).waitFor();
			await page.locator('.statusbar-item', { hasText: 'MCP' }).first().waitFor();
		});
		await shot(page, 'welcome');
		await step(page, 'Add MCP Server refuses a bad name before writing', async () => {
			await page.getByRole('button', { name: 'Add MCP Server', exact: true }).click();
			await quickPick(page, 'Local');
			await page.locator('.quick-input-title', { hasText: 'Add MCP Server (2/3)' }).waitFor();
			await page.locator('.quick-input-widget input').fill('bad__name');
			await page.locator('.quick-input-message', { hasText: 'No "__"' }).waitFor();
			await page.keyboard.press('Enter'); // refused: the box stays
			await page.locator('.quick-input-message', { hasText: 'No "__"' }).waitFor();
		});
		await shot(page, 'add-server-name-check');
		await step(page, 'Add MCP Server writes the entry through the bundled CLI, and the server connects', async () => {
			await page.locator('.quick-input-widget input').fill('added');
			await page.keyboard.press('Enter');
			await page.locator('.quick-input-title', { hasText: 'Add MCP Server (3/3)' }).waitFor();
			await page.locator('.quick-input-widget input').fill(`${demo} --name added`);
			await page.keyboard.press('Enter');
			await page.locator('.statusbar-item', { hasText: 'Added local server "added" to config.json' }).first().waitFor();
			const entry = JSON.parse(config()).mcp.servers.find((s) => s.name === 'added');
			if (!entry || entry.command.join(' ') !== `${demo} --name added`) {
				throw new Error(`config.json does not hold the new entry: ${config()}`);
			}
			await treeRow(page, 'added').locator('.label-description', { hasText: /^connected · 7 tools$/ }).waitFor();
		});
		await shot(page, 'add-server-added');
		// Issue 35's first five minutes: three servers added one after
		// another, each connected before the next is added.
		const addLocal = async (name) => {
			await runCommand(page, 'FreeCode: Add MCP Server…');
			await quickPick(page, 'Local');
			await page.locator('.quick-input-title', { hasText: 'Add MCP Server (2/3)' }).waitFor();
			await page.locator('.quick-input-widget input').fill(name);
			await page.keyboard.press('Enter');
			await page.locator('.quick-input-title', { hasText: 'Add MCP Server (3/3)' }).waitFor();
			await page.locator('.quick-input-widget input').fill(`${demo} --name ${name}`);
			await page.keyboard.press('Enter');
			await page.locator('.statusbar-item', { hasText: `Added local server "${name}" to config.json` }).first().waitFor();
			await treeRow(page, name).locator('.label-description', { hasText: /^connected · 7 tools$/ }).waitFor();
		};
		await step(page, 'two more servers added one after the other: three connected', async () => {
			await addLocal('notes');
			await addLocal('search');
			const names = JSON.parse(config()).mcp.servers.map((s) => s.name);
			if (names.join(',') !== 'added,notes,search') throw new Error(`config.json's servers: ${names}`);
			await page.locator('.statusbar-item', { hasText: 'MCP 3/3' }).first().waitFor();
		});
		await shot(page, 'add-three-servers');
		const dialog = page.locator('.monaco-dialog-box');
		const preview = async () => {
			await runCommand(page, 'FreeCode: Import MCP Servers…');
			await quickPick(page, 'Claude Desktop');
			await dialog.getByText('Import MCP servers from Claude Desktop?').waitFor();
			await dialog.getByText('+ imported (local)').waitFor();
			if (config().includes('"imported"')) throw new Error('the config holds imported before Import was clicked');
		};
		await step(page, 'Import MCP Servers previews, and Enter, its default button, imports nothing', async () => {
			await preview();
			await shot(page, 'import-preview');
			await page.keyboard.press('Enter');
			await dialog.waitFor({ state: 'detached' });
		});
		await step(page, 'Import MCP Servers previews again, imports on Import, and the server connects', async () => {
			// The preview still lists imported: Enter wrote nothing.
			await preview();
			await dialog.getByRole('button', { name: 'Import', exact: true }).click();
			await page.locator('.notifications-toasts', { hasText: 'Added 1 server' }).waitFor();
			if (!config().includes('"imported"')) throw new Error(`imported was not imported: ${config()}`);
			await treeRow(page, 'imported').locator('.label-description', { hasText: /^connected · 7 tools$/ }).waitFor();
			await page.locator('.statusbar-item', { hasText: 'MCP 4/4' }).first().waitFor();
		});
		await shot(page, 'imported');

		// VS Code's mcp.json pasted over FreeCode's config, as a new user
		// would: a server map under "servers" and a password input.
		const mcpJson = {
			inputs: [{ type: 'promptString', id: 'notes-token', description: 'Notes API token', password: true }],
			servers: {
				'vs-notes': { type: 'stdio', command: demo, args: ['--name', 'vs-notes'], env: { NOTES_TOKEN: '${input:notes-token}' } },
				'vs-files': { type: 'stdio', command: demo, args: ['--name', 'vs-files'] },
			},
		};
		const notice = page.locator('.pane-body .monaco-list-row', { hasText: /config\.json: \d+ problems?/ });
		await step(page, "VS Code's mcp.json pasted over the config: the view says so, and the last good config still runs", async () => {
			await runCommand(page, 'FreeCode: Open MCP Config');
			await page.locator('.tab', { hasText: 'config.json' }).waitFor();
			await replaceEditorText(page, `${JSON.stringify(mcpJson, null, 2)}\n`);
			await page.keyboard.press('Control+S');
			await notice.waitFor();
			await notice.hover();
			await page.locator('.statusbar-item.warning-kind', { hasText: 'MCP' }).first().waitFor();
			await rowDescription(page, 'added', /^connected · 7 tools$/);
		});
		await shot(page, 'paste-mcp-json');
		await step(page, 'Import MCP Servers offers This Config File and previews the conversion', async () => {
			await page.mouse.move(0, 0);
			await runCommand(page, 'FreeCode: Import MCP Servers…');
			await page.locator('.quick-input-list .monaco-list-row', { hasText: 'This Config File' }).first().waitFor();
			await shot(page, 'paste-import-pick');
			await quickPick(page, 'This Config File');
			await dialog.getByText('+ vs-notes (local)').waitFor();
			await dialog.getByText('+ vs-files (local)').waitFor();
			await dialog.getByText(/notes-token/).first().waitFor();
			// The servers the paste replaced, which still run, are named
			// before the import stops them.
			await dialog.getByText(/Running now but no longer in the file, which the paste replaced: .*added/).waitFor();
		});
		await shot(page, 'paste-import-preview');
		await step(page, "Import turns the file into FreeCode's: vs-files connects, vs-notes needs its secret", async () => {
			await dialog.getByRole('button', { name: 'Import', exact: true }).click();
			await notified(page, 'Added 2 servers');
			await notice.waitFor({ state: 'detached' });
			const c = JSON.parse(config());
			if (c.servers || !c.mcp?.servers?.some((s) => s.name === 'vs-notes')) throw new Error(`the config was not converted: ${config()}`);
			await rowDescription(page, 'vs-files', /^connected · 7 tools$/);
			await rowDescription(page, 'vs-notes', /^needs a secret$/);
			// Its notice says which secret, and offers Set Secret….
			await notified(page, 'The MCP server vs-notes, just added, needs the secret notes-token.');
		});
		await shot(page, 'paste-imported-needs-secret');
		await step(page, 'Set Secret… on the row asks for the value unseen, and the server connects', async () => {
			await rowAction(page, treeRow(page, 'vs-notes'), 'Set Secret');
			const input = page.locator('.quick-input-widget input[type="password"]');
			await input.waitFor();
			await page.locator('.quick-input-widget', { hasText: 'notes-token' }).waitFor();
			await input.fill('s3cret-value');
			await shot(page, 'set-secret-input');
			await page.keyboard.press('Enter');
			await rowDescription(page, 'vs-notes', /^connected · 7 tools$/);
			if (config().includes('s3cret-value')) throw new Error('the secret is in the config file');
			// A notice about new servers gathered before the fix must not come after it.
			await page.waitForTimeout(2000);
			if ((await page.getByText('no reason given').count()) > 0) throw new Error('a notice says vs-notes failed after it connected');
		});
		await shot(page, 'set-secret-connected');
	});
}

function demoConfig(bin, workspace, second) {
	const servers = [{ name: 'demo', type: 'local', command: [path.join(bin, 'demo-server'), '--root', workspace] }];
	if (second) servers.push({ name: 'second', type: 'local', command: [path.join(bin, 'demo-server'), '--name', 'second'] });
	return `${JSON.stringify({ mcp: { servers } }, null, 2)}\n`;
}

async function scenarioDemo() {
	if (!args.bin) throw new Error('the demo scenario needs --bin (the directory with demo-server)');
	const demo = path.join(args.bin, 'demo-server');
	if (!fs.existsSync(demo)) throw new Error(`no ${demo}: run make build`);
	let victim;
	const prepare = (d) => {
		fs.mkdirSync(path.join(d.home, '.freecode'), { recursive: true, mode: 0o700 });
		const configPath = path.join(d.home, '.freecode', 'config.json');
		fs.writeFileSync(configPath, demoConfig(args.bin, d.workspace, false), { mode: 0o600 });
		fs.writeFileSync(path.join(d.workspace, 'README.md'), '# e2e workspace\n');
		victim = path.join(d.workspace, 'delete-me.txt');
		fs.writeFileSync(victim, 'the destructive demo tool deletes this file once allowed\n');
	};
	await inVSCode('demo', {}, prepare, async (page, d) => {
		await step(page, 'MCP Servers view opens', () => openServersView(page));
		await step(page, 'the demo server is connected with its tools', async () => {
			await treeRow(page, 'demo').locator('.label-description', { hasText: /^connected · 7 tools$/ }).waitFor();
			await treeRow(page, 'delete_file').locator('.label-description', { hasText: 'destructive' }).waitFor();
			await treeRow(page, 'read_file').locator('.label-description', { hasText: 'read-only' }).waitFor();
			await page.locator('.statusbar-item', { hasText: 'MCP 1/1' }).first().waitFor();
		});
		await shot(page, 'servers-connected');

		await step(page, 'Run Tool… on delete_file opens its arguments', async () => {
			// The row's inline ▷ action, shown on hover.
			const row = treeRow(page, 'delete_file');
			await rowAction(page, row, 'Run Tool');
			await page.locator('.view-lines', { hasText: 'Arguments for mcp__demo__delete_file' }).waitFor();
			// As a person fills in the prefilled document: into the quotes of
			// "path": "", the line before the closing brace.
			await page.locator('.view-lines', { hasText: '"path": ""' }).waitFor();
			const editor = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
			await editor.click();
			for (const key of ['Control+End', 'ArrowUp', 'ArrowUp', 'End', 'ArrowLeft']) await page.keyboard.press(key);
			await page.keyboard.insertText('delete-me.txt');
			await page.locator('.view-lines', { hasText: '"path": "delete-me.txt"' }).waitFor();
		});
		const run = () => page.locator('.editor-actions [aria-label^="Run Tool with These Arguments"]').first().click();
		const dialog = page.locator('.monaco-dialog-box');
		await step(page, 'running it asks for permission', async () => {
			await run();
			await dialog.getByText('Allow FreeCode to run mcp__demo__delete_file?').waitFor();
			await dialog.getByText('This tool can change things, maybe for good (destructive, as its server describes it).').waitFor();
			await dialog.getByText('"path": "delete-me.txt"').waitFor();
			// VS Code adds a Cancel of its own to every modal: the prompt says what it does.
			await dialog.getByText('Cancel and Escape deny, as Deny does: the tool does not run.').waitFor();
		});
		await shot(page, 'permission-prompt');
		await step(page, 'Deny shows the denial and runs nothing', async () => {
			await dialog.getByRole('button', { name: 'Deny' }).click();
			await page.locator('.notifications-toasts', { hasText: 'mcp__demo__delete_file was denied' }).waitFor();
			if (!fs.existsSync(victim)) throw new Error('the file is gone although the call was denied');
		});
		await shot(page, 'denied');
		await step(page, "VS Code's own Cancel denies, as the prompt says", async () => {
			await runCommand(page, 'Notifications: Clear All Notifications');
			await page.locator('.notifications-toasts .notification-toast').first().waitFor({ state: 'detached' });
			await page.locator('.tab', { hasText: 'Tool Arguments' }).first().click();
			await run();
			await dialog.getByText('Allow FreeCode to run mcp__demo__delete_file?').waitFor();
			await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
			await page.locator('.notifications-toasts', { hasText: 'mcp__demo__delete_file was denied' }).waitFor();
			if (!fs.existsSync(victim)) throw new Error('the file is gone although the call was cancelled');
		});
		await step(page, 'Allow Once runs it', async () => {
			await page.locator('.tab', { hasText: 'Tool Arguments' }).first().click();
			await run();
			await dialog.getByText('Allow FreeCode to run mcp__demo__delete_file?').waitFor();
			await dialog.getByRole('button', { name: 'Allow Once' }).click();
			// The status bar says it ran; the result is in its document.
			await page.locator('.statusbar-item', { hasText: /mcp__demo__delete_file ran in/ }).waitFor();
			// The result, in a read-only document beside the arguments.
			await page.locator('.tab', { hasText: 'Tool Result' }).waitFor();
			await page.locator('.view-lines', { hasText: 'deleted delete-me.txt' }).waitFor();
			if (fs.existsSync(victim)) throw new Error('the call was allowed but the file is still there');
		});
		await shot(page, 'allowed');

		await step(page, 'editing the config adds a server without a reload', async () => {
			await runCommand(page, 'FreeCode: Open MCP Config');
			await page.locator('.tab', { hasText: 'config.json' }).waitFor();
			await replaceEditorText(page, demoConfig(args.bin, d.workspace, true));
			await page.keyboard.press('Control+S');
			await treeRow(page, 'second').locator('.label-description', { hasText: /^connected · 7 tools$/ }).waitFor();
			await page.locator('.statusbar-item', { hasText: 'MCP 2/2' }).first().waitFor();
		});
		await shot(page, 'config-edit');

		await step(page, 'a stopped server removed from the config leaves the tree', async () => {
			const row = treeRow(page, 'second');
			await rowAction(page, row, 'Stop');
			await row.locator('.label-description', { hasText: /^stopped$/ }).waitFor();
			await page.locator('.tab', { hasText: 'config.json' }).click();
			await replaceEditorText(page, demoConfig(args.bin, d.workspace, false));
			await page.keyboard.press('Control+S');
			await treeRow(page, 'second').waitFor({ state: 'detached' });
			await treeRow(page, 'demo').locator('.label-description', { hasText: /^connected · 7 tools$/ }).waitFor();
			await page.locator('.statusbar-item', { hasText: 'MCP 1/1' }).first().waitFor();
		});
		await shot(page, 'config-removed');
	});
}

/** rowDescription is a tree row's description, once it matches re. */
async function rowDescription(page, label, re, timeout) {
	await treeRow(page, label).locator('.label-description', { hasText: re }).waitFor({ timeout });
	return treeRow(page, label).locator('.label-description').innerText();
}

/** contextMenu right-clicks a tree row and picks an item of its menu. */
async function contextMenu(page, label, item) {
	await treeRow(page, label).click({ button: 'right' });
	const menu = page.locator('.context-view .monaco-menu');
	const entry = menu.locator('.action-label', { hasText: item }).first();
	await entry.hover();
	await entry.click();
	// A click while the menu still settles can go unseen: the highlighted
	// item is what Enter picks then.
	try {
		await menu.waitFor({ state: 'detached', timeout: 2000 });
	} catch {
		await page.keyboard.press('Enter');
		await menu.waitFor({ state: 'detached' });
	}
}

function manageConfig(bin, workspace, extra = []) {
	const demo = path.join(bin, 'demo-server');
	const servers = [
		{ name: 'demo', type: 'local', command: [demo, '--root', workspace] },
		// The shape of Claude Desktop's, Cursor's and VS Code's configs.
		{ name: 'argsform', type: 'stdio', command: demo, args: ['--name', 'argsform'] },
		...extra,
	];
	return `${JSON.stringify({ mcp: { servers } }, null, 2)}\n`;
}

const missingEntry = { name: 'missing', type: 'local', command: ['/nonexistent/freecode-e2e/no-such-server'] };
const exitsEntry = { name: 'exits', type: 'local', command: ['sh', '-c', 'echo "error: GITHUB_TOKEN is not set" >&2; exit 3'] };

/**
 * scenarioManage: issue 22's steps. The command + args shape connects; a
 * missing command fails at once and one that exits shows its stderr, and a
 * server just added that fails raises a notification with Show Log; Show
 * Log from a failed row; Disable and Remove from the view; per-server
 * actions from the palette; a broken config is said in the view and the
 * status bar at its line; three tool runs leave one argument/result pair;
 * FreeCode is in VS Code's own MCP: List Servers.
 */
async function scenarioManage() {
	if (!args.bin) throw new Error('the manage scenario needs --bin (the directory with demo-server)');
	let configPath;
	const config = () => fs.readFileSync(configPath, 'utf8');
	const prepare = (d) => {
		fs.mkdirSync(path.join(d.home, '.freecode'), { recursive: true, mode: 0o700 });
		configPath = path.join(d.home, '.freecode', 'config.json');
		fs.writeFileSync(configPath, manageConfig(args.bin, d.workspace), { mode: 0o600 });
		fs.writeFileSync(path.join(d.workspace, 'README.md'), '# e2e workspace\n');
		// VS Code's own MCP support is part of its AI features.
		const user = path.join(d.userData, 'User', 'settings.json');
		const settings = JSON.parse(fs.readFileSync(user, 'utf8'));
		settings['chat.disableAIFeatures'] = false;
		fs.writeFileSync(user, JSON.stringify(settings, null, 2));
	};
	await inVSCode('manage', {}, prepare, async (page, d) => {
		const write = (text) => fs.writeFileSync(configPath, text, { mode: 0o600 });
		await step(page, 'MCP Servers view opens', () => openServersView(page));
		await step(page, 'an entry in the command + args shape ("type": "stdio") connects', async () => {
			await rowDescription(page, 'argsform', /^connected · 7 tools$/);
			await rowDescription(page, 'demo', /^connected · 7 tools$/);
			await page.locator('.statusbar-item', { hasText: 'MCP 2/2' }).first().waitFor();
		});
		await shot(page, 'manage-command-args');

		await step(page, 'a missing command fails in under 2 s', async () => {
			const t0 = Date.now();
			write(manageConfig(args.bin, d.workspace, [missingEntry]));
			const text = await rowDescription(page, 'missing', /^failed/, 30_000);
			const ms = Date.now() - t0;
			log(`missing: "${text}" ${ms} ms after the config was written`);
			if (ms >= 2000) throw new Error(`missing failed after ${ms} ms`);
			// Its notice, alone: failures a moment apart are told in one
			// notice (newServers.ts), and the next step's server is added
			// after this one was told.
			await page.locator('.notifications-toasts .notification-toast', { hasText: 'missing, just added, failed' }).waitFor();
		});
		await shot(page, 'manage-missing-failed');

		await step(page, 'a server just added that exits shows its stderr and raises a notification with Show Log', async () => {
			write(manageConfig(args.bin, d.workspace, [missingEntry, exitsEntry]));
			const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'exits, just added, failed' });
			await toast.waitFor();
			await rowDescription(page, 'exits', /GITHUB_TOKEN is not set/);
			await shot(page, 'manage-exits-notification');
			await toast.getByRole('button', { name: 'Show Log' }).click();
			await page.locator('.part.panel .view-lines', { hasText: 'GITHUB_TOKEN is not set' }).first().waitFor();
		});
		await shot(page, 'manage-exits-log');

		await step(page, 'Show Server Log is on a failed row', async () => {
			const row = treeRow(page, 'missing');
			await rowAction(page, row, 'Show Server Log');
			await page.locator('.part.panel .view-lines', { hasText: 'no-such-server' }).first().waitFor();
		});
		await shot(page, 'manage-show-log-inline');

		await step(page, 'Disable from the view', async () => {
			await contextMenu(page, 'argsform', 'Disable Server');
			await rowDescription(page, 'argsform', /^disabled$/);
			if (!/"enabled":\s*false/.test(config())) throw new Error(`argsform is not disabled in the config: ${config()}`);
		});
		await step(page, 'Remove from the view, after a confirmation', async () => {
			await contextMenu(page, 'exits', 'Remove Server');
			const dialog = page.locator('.monaco-dialog-box');
			await dialog.getByText('Remove exits from your config?').waitFor();
			await shot(page, 'manage-remove-confirm');
			await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
			await treeRow(page, 'exits').waitFor({ state: 'detached' });
			if (config().includes('"exits"')) throw new Error(`exits is still in the config: ${config()}`);
		});
		await shot(page, 'manage-disabled-removed');

		await step(page, "the palette's per-server actions pick a server; Restart says it restarted", async () => {
			await runCommand(page, 'FreeCode: Restart Server');
			await quickPick(page, 'demo');
			await page.locator('.statusbar-item', { hasText: /demo: (connected|connecting)/ }).first().waitFor();
			await rowDescription(page, 'demo', /^connected · 7 tools$/);
		});
		await shot(page, 'manage-palette-restart');
		await step(page, 'Show Server Configuration opens the config as JSON with comments at the entry', async () => {
			await runCommand(page, 'FreeCode: Show Server Configuration');
			await quickPick(page, 'missing');
			await page.locator('.tab.active', { hasText: 'config.json' }).waitFor();
			await page.locator('.statusbar-item', { hasText: 'JSON with Comments' }).first().waitFor();
			const lines = config().split('\n');
			const line = lines.findIndex((l) => l.includes('"name": "missing"')) + 1;
			const col = lines[line - 1].indexOf('"name"') + 1;
			await page.locator('.statusbar-item', { hasText: `Ln ${line}, Col ${col}` }).first().waitFor();
		});
		await shot(page, 'manage-show-configuration');

		await step(page, 'a broken config is said in the view and the status bar, at its line', async () => {
			// The servers the file still holds, then a line that breaks it.
			const good = manageConfig(args.bin, d.workspace, [missingEntry]).split('\n');
			const broken = [...good.slice(0, 3), '    oops', ...good.slice(3)].join('\n');
			await replaceEditorText(page, broken);
			await page.keyboard.press('Control+S');
			const notice = page.locator('.pane-body .monaco-list-row', { hasText: /config\.json: \d+ problems?/ });
			await notice.waitFor();
			await notice.locator('.label-description', { hasText: /^line 4, column 5/ }).waitFor();
			await page.locator('.statusbar-item.warning-kind', { hasText: 'MCP' }).first().waitFor();
			// The last good config still runs.
			await rowDescription(page, 'demo', /^connected · 7 tools$/);
			await shot(page, 'manage-config-problem');
			await notice.click();
			await page.locator('.markers-panel .monaco-list-row', { hasText: /oops|invalid/ }).first().waitFor();
		});
		await shot(page, 'manage-config-problem-panel');
		await step(page, 'fixed, with a // comment, the notice goes and no "Comments are not permitted" shows', async () => {
			await page.locator('.tab', { hasText: 'config.json' }).click();
			const good = manageConfig(args.bin, d.workspace, [missingEntry]).split('\n');
			await replaceEditorText(page, ['// FreeCode reads JSON with comments', ...good].join('\n'));
			await page.keyboard.press('Control+S');
			await page.locator('.pane-body .monaco-list-row', { hasText: /config\.json: \d+ problems?/ }).waitFor({ state: 'detached' });
			// Still warning-coloured: missing failed. The problem has left its tooltip.
			await page.locator('.statusbar-item[aria-label*="last good"]').waitFor({ state: 'detached' });
			await page.waitForTimeout(1500); // the JSON language server's diagnostics
			if ((await page.getByText('Comments are not permitted in JSON').count()) > 0) throw new Error('the config is checked as plain JSON');
		});

		await step(page, 'three tool runs leave one argument/result pair, none unsaved', async () => {
			await runCommand(page, 'View: Close All Editors');
			const ran = page.locator('.statusbar-item', { hasText: 'mcp__demo__list_files ran in' });
			for (let i = 1; i <= 3; i++) {
				// A click on the tool does what its ▷ does.
				await page.getByRole('treeitem', { name: /^mcp__demo__list_files — / }).click();
				await page.locator('.view-lines', { hasText: 'Arguments for mcp__demo__list_files' }).waitFor();
				await page.locator('.monaco-editor.focused .view-lines', { hasText: 'Arguments for mcp__demo__list_files' }).waitFor();
				await page.locator('.editor-actions [aria-label^="Run Tool with These Arguments"]').first().click();
				await ran.first().waitFor();
				await page.locator('.view-lines', { hasText: 'mcp__demo__list_files — ok' }).first().waitFor();
				if ((await page.locator('.notifications-toasts .notification-toast', { hasText: 'ran in' }).count()) > 0) {
					throw new Error(`a run that went well left a toast: ${await page.locator('.notifications-toasts').innerText()}`);
				}
			}
			const tabs = await page.locator('.tab').allInnerTexts();
			const names = tabs.map((t) => t.trim().split('\n')[0]);
			// A tab's label is the file's name without its extension.
			const want = (n) => names.some((x) => x === n || x.startsWith(`${n}.`));
			if (names.length !== 2 || !want('Tool Arguments') || !want('Tool Result')) {
				throw new Error(`the editors after three runs: ${JSON.stringify(names)}`);
			}
			if ((await page.locator('.tab.dirty').count()) > 0) throw new Error('a tool run left an unsaved editor');
		});
		await shot(page, 'manage-tool-runs');
		await step(page, 'a window reload restores the arguments tab as it was, named as it is', async () => {
			await runCommand(page, 'Developer: Reload Window');
			await page.locator('.monaco-workbench').waitFor();
			await page.locator('.tab', { hasText: 'Tool Arguments' }).first().click();
			await page.locator('.view-lines', { hasText: 'Arguments for mcp__demo__list_files' }).waitFor();
			if ((await page.getByText(/was not found|Create File/).count()) > 0) throw new Error('the restored arguments tab has no file');
			const crumbs = await page.locator('.breadcrumbs-control').first().innerText().catch(() => '');
			if (/globalStorage|tool-runs/.test(crumbs)) throw new Error(`the arguments tab's breadcrumbs show a storage path: ${crumbs}`);
		});
		await shot(page, 'arguments-after-reload');

		await step(page, "FreeCode is in VS Code's own MCP: List Servers", async () => {
			await runCommand(page, 'MCP: List Servers');
			await page.locator('.quick-input-list .monaco-list-row', { hasText: 'FreeCode' }).first().waitFor();
		});
		await shot(page, 'manage-mcp-list-servers');
		await page.keyboard.press('Escape');
	});
}

/**
 * scenarioVSCodeChat: FreeCode's servers in VS Code's own chat, as a user
 * gets there (issue 22; issue 35, item 7). Where VS Code has
 * McpHttpServerDefinition, MCP: List Servers lists each FreeCode server
 * (demo, second) as a server of its own, served by the sidecar the
 * extension runs: started, each says it discovered its 7 tools; the
 * chat's tools picker (agent mode, Configure Tools…) groups them under
 * each server's name; and no second copy of a demo server runs (the
 * processes are counted). Elsewhere it takes the fallback, one FreeCode
 * server (`freecode mcp serve --stdio`), and checks that as before. The
 * log says which path it took.
 */
async function scenarioVSCodeChat() {
	if (!args.bin) throw new Error('the vscode-chat scenario needs --bin (the directory with demo-server)');
	const demoServer = path.join(args.bin, 'demo-server');
	const prepare = (d) => {
		fs.mkdirSync(path.join(d.home, '.freecode'), { recursive: true, mode: 0o700 });
		fs.writeFileSync(path.join(d.home, '.freecode', 'config.json'), demoConfig(args.bin, d.workspace, true), { mode: 0o600 });
		const user = path.join(d.userData, 'User', 'settings.json');
		const settings = JSON.parse(fs.readFileSync(user, 'utf8'));
		settings['chat.disableAIFeatures'] = false; // VS Code's MCP support is part of its AI features
		fs.writeFileSync(user, JSON.stringify(settings, null, 2));
	};
	const demoTools = ['delete_file', 'list_files', 'read_file'];
	await inVSCode('vscode-chat', {}, prepare, async (page, d) => {
		const row = (text) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
		// A server's row: its label, then its state (the row's text runs them together).
		const listed = (name) => row(new RegExp(`^${name}\\s*(Stopped|Starting|Running)`));
		let http = false;
		await step(page, 'MCP: List Servers has FreeCode\'s servers', async () => {
			await runCommand(page, 'MCP: List Servers');
			await listed('demo').or(row(/^FreeCode\s*Stopped/)).first().waitFor();
			http = await listed('demo').isVisible();
			log(`VS Code's chat path: ${http ? 'the sidecar, one McpHttpServerDefinition per FreeCode server' : 'the fallback, one McpStdioServerDefinition (freecode mcp serve --stdio)'}`);
			if (http) await listed('second').waitFor();
		});
		await shot(page, 'vscode-chat-list-servers');
		const servers = http ? ['demo', 'second'] : ['FreeCode'];
		for (const name of servers) {
			await step(page, `${name}: Start Server if it is stopped; VS Code discovers its 7 tools`, async () => {
				await page.keyboard.press('Escape');
				await runCommand(page, 'MCP: List Servers');
				const r = listed(name);
				await r.waitFor();
				await r.click();
				const start = row('Start Server');
				const output = row('Show Output');
				await start.or(output).first().waitFor();
				if (await start.isVisible()) {
					await start.click();
					await page.locator('.quick-input-widget').first().waitFor({ state: 'hidden' });
					await runCommand(page, 'MCP: List Servers');
					await row(new RegExp(`^${name}\\s*Running`)).waitFor();
					await listed(name).click();
				}
				await row('Show Output').click();
				await page.locator('.part.panel .view-lines', { hasText: 'Discovered 7 tools' }).first().waitFor();
			});
		}
		await shot(page, 'vscode-chat-started');
		// The picker names a group by the server's title: "FreeCode: demo"
		// for a FreeCode server (mcpserve's one-server mode), "FreeCode" for
		// the fallback's one server.
		const groups = servers.map((name) => (http ? `FreeCode: ${name}` : name));
		await step(page, `the chat's tools picker groups the tools under ${groups.join(' and ')}`, async () => {
			await runCommand(page, 'Chat: Open Chat (Agent)');
			await page.locator('.action-label[aria-label^="Configure Tools"]').first().click();
			// One group open at a time: the list renders only the rows in view.
			const under = {};
			for (const label of groups) {
				// Its aria-label may go on with the description.
				const group = page.locator(`.quick-input-widget .monaco-list-row[aria-level="1"][aria-label^="${label}"]`);
				await group.waitFor();
				if ((await group.getAttribute('aria-expanded')) !== 'true') await group.locator('.monaco-tl-twistie').click();
				const tools = page.locator('.quick-input-widget .monaco-list-row[aria-level="2"]');
				for (const t of demoTools) await tools.filter({ hasText: t }).first().waitFor();
				under[label] = await page.locator('.quick-input-widget .monaco-list-row').evaluateAll((rows, label) => {
					const i = rows.findIndex((r) => r.getAttribute('aria-level') === '1' && r.getAttribute('aria-label').startsWith(label));
					const out = [];
					for (const r of rows.slice(i + 1)) {
						if (r.getAttribute('aria-level') !== '2') break;
						out.push(r.getAttribute('aria-label').split(',')[0]);
					}
					return out;
				}, label);
				await group.locator('.monaco-tl-twistie').click();
				await page.locator(`.quick-input-widget .monaco-list-row[aria-level="1"][aria-label^="${label}"][aria-expanded="false"]`).waitFor();
			}
			log(`the tools picker: ${JSON.stringify(under)}`);
			for (const label of groups) {
				if (under[label].length !== 7) throw new Error(`${label} has ${under[label].length} tools in the picker, want the demo server's 7: ${JSON.stringify(under)}`);
				if (http && under[label].some((t) => t.startsWith('mcp__'))) throw new Error(`${label}'s tools are listed under FreeCode's ids, not their own names: ${JSON.stringify(under)}`);
			}
		});
		await shot(page, 'vscode-chat-tools-picker');
		await page.keyboard.press('Escape');
		if (http) {
			await step(page, 'one demo-server process per FreeCode server: none started for the chat', async () => {
				const procs = processesOf(demoServer, d.home);
				log(`demo-server processes: ${JSON.stringify(procs)}`);
				const demo = procs.filter((a) => !a.includes('second')).length;
				const second = procs.filter((a) => a.includes('second')).length;
				if (demo !== 1 || second !== 1) throw new Error(`${demo} demo and ${second} second processes, want one each: ${JSON.stringify(procs)}`);
			});
		}
	});
}

/**
 * processesOf lists the command lines of the running processes of the
 * executable exe whose HOME is home: this scenario's, not another run's on
 * the same machine.
 */
function processesOf(exe, home) {
	const out = [];
	for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
		let argv;
		try {
			argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
		} catch {
			continue; // gone, or not ours to read
		}
		if (argv[0] !== exe) continue;
		let env = [];
		try {
			env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
		} catch {}
		if (env.includes(`HOME=${home}`)) out.push(argv.join(' '));
	}
	return out;
}

/**
 * scenarioSignIn: issue 17's sign-in, connect and call from the extension,
 * to an MCP server that speaks only 2026-07-28, behind OAuth
 * (internal/oauthtest/cmd/oauth-newest-server, on loopback). The row says
 * it needs a sign-in; its Sign In asks VS Code to open the authorization
 * page (vscode.env.openExternal), which opens a browser page; that page is
 * loaded by HTTP as the browser would (the consent is automatic) and
 * redirects to the sidecar's callback; the row connects with the tool; a
 * run of the tool shows its result.
 */
async function scenarioSignIn() {
	if (!args.oauthServer) throw new Error('the signin scenario needs --oauth-server (the built internal/oauthtest/cmd/oauth-newest-server)');
	const as = spawn(args.oauthServer, [], { stdio: ['pipe', 'pipe', 'pipe'] });
	let asLog = '';
	as.stderr.on('data', (b) => (asLog += b.toString()));
	try {
		const [line] = await once(createInterface({ input: as.stdout }), 'line');
		const urls = JSON.parse(line);
		const prepare = (d) => {
			fs.mkdirSync(path.join(d.home, '.freecode'), { recursive: true, mode: 0o700 });
			const servers = [{ name: 'secure', type: 'remote', url: urls.mcpURL, transport: 'http' }];
			fs.writeFileSync(path.join(d.home, '.freecode', 'config.json'), `${JSON.stringify({ mcp: { servers } }, null, 2)}\n`, { mode: 0o600 });
		};
		await inVSCode('signin', {}, prepare, async (page) => {
			await step(page, 'MCP Servers view opens', () => openServersView(page));
			await step(page, 'the server says it needs a sign-in', () => rowDescription(page, 'secure', /sign-in needed/));
			await shot(page, 'signin-needed');
			await step(page, "Sign In opens the authorization page; consenting by HTTP sends the browser back to the sidecar", async () => {
				// VS Code opens the page (vscode.env.openExternal) in a new
				// browser page; code-server sends a loopback page through its
				// own /proxy/PORT/, whose forwarding collapses the "//" of a
				// URL in the query (docs/upstream/code-server-proxy-query.md).
				// So the page's URL is captured there and its request made by
				// HTTP to the authorization server itself, as the browser
				// would without the proxy; its consent is automatic.
				const codeServer = new URL(page.url()).origin;
				const issuer = new URL(urls.issuer);
				const pages = [`${urls.issuer}/authorize?`, `${codeServer}/proxy/${issuer.port}/authorize?`];
				let captured;
				const capture = (u) => pages.some((p) => u.href.startsWith(p));
				const answer = (route) => {
					captured ??= route.request().url();
					return route.fulfill({ status: 200, contentType: 'text/plain', body: 'The e2e test completes this sign-in by HTTP.' });
				};
				await page.context().route(capture, answer);
				const popup = page.context().waitForEvent('page');
				const row = treeRow(page, 'secure');
				await rowAction(page, row, 'Sign In');
				const browser = await popup;
				await browser.waitForLoadState();
				await page.context().unroute(capture, answer);
				if (!captured) throw new Error(`the page opened is not the authorization page: ${browser.url()}`);
				const authorize = new URL(`${urls.issuer}/authorize${new URL(captured).search}`);
				log(`the sign-in opened ${captured.replace(/\?.*/, '?…')}; consenting at ${authorize.origin}${authorize.pathname}`);
				if (authorize.searchParams.get('code_challenge_method') !== 'S256') throw new Error(`no PKCE in ${captured}`);
				const r = await fetch(authorize, { redirect: 'follow' });
				const body = await r.text();
				if (r.status !== 200 || !/^http:\/\/127\.0\.0\.1:\d+\/callback\?/.test(r.url)) {
					throw new Error(`the consent ended at ${r.url} with ${r.status}: ${body}`);
				}
				await browser.close();
			});
			await step(page, 'the server connects with its tool', () => rowDescription(page, 'secure', /^connected · 1 tool$/));
			await shot(page, 'signin-connected');
			await step(page, 'a run of its tool, allowed once, shows the answer of the 2026-07-28-only server', async () => {
				await page.getByRole('treeitem', { name: /^mcp__secure__echo — / }).click();
				await page.locator('.view-lines', { hasText: 'Arguments for mcp__secure__echo' }).waitFor();
				// Its one parameter is optional: the arguments start as {}.
				await replaceEditorText(page, '{ "text": "signed in from VS Code" }');
				await page.locator('.view-lines', { hasText: '"text": "signed in from VS Code"' }).waitFor();
				await page.locator('.editor-actions [aria-label^="Run Tool with These Arguments"]').first().click();
				const dialog = page.locator('.monaco-dialog-box');
				await dialog.getByText('Allow FreeCode to run mcp__secure__echo?').waitFor();
				await dialog.getByRole('button', { name: 'Allow Once' }).click();
				await page.locator('.view-lines', { hasText: 'mcp__secure__echo — ok' }).first().waitFor();
				await page.locator('.view-lines', { hasText: 'signed in from VS Code' }).last().waitFor();
			});
			await shot(page, 'signin-tool-result');
		});
	} finally {
		as.stdin.end();
		await once(as, 'exit');
		fs.writeFileSync(path.join(args.out, 'signin-authorization-server.log'), asLog);
	}
}

const scenarios = { 'sidecar-missing': scenarioSidecarMissing, signin: scenarioSignIn, 'vscode-chat': scenarioVSCodeChat, cli: scenarioCli, demo: scenarioDemo, manage: scenarioManage };
// apps (issue 18, in apps.mjs): a tool's MCP Apps view in a webview, sandboxed; a call it makes to a
// destructive tool asks first.
scenarios.apps = () => scenarioApps({ args, inVSCode, step, shot, treeRow, rowAction, openServersView, log, uiTimeoutMs });
// real-apps (issue 35, in realApps.mjs): three of the MCP Apps project's example servers from npm, their
// views rendered, themed and calling through FreeCode's rules.
scenarios['real-apps'] = () => scenarioRealApps({ args, inVSCode, step, shot, treeRow, rowAction, openServersView, log, uiTimeoutMs });
// tasks (issue 18, in tasks.mjs): a call run as a task in the Tasks group: working, completed, cancelled.
scenarios.tasks = () => scenarioTasks({ args, inVSCode, step, shot, treeRow, rowAction, openServersView, replaceEditorText, notified });
// review (issue 35, item 5, in review.mjs): a tool's description gains a sentence; Review Changes, the
// notice's primary button, opens the diff editor, the sentence a line of its own; Reject All before Accept All.
// registry (issue 34, in registry.mjs): Browse MCP Registry… against the fixture registry.
scenarios.registry = () => scenarioRegistry({ args, inVSCode, step, shot, treeRow, rowAction, openServersView, runCommand });
scenarios.review = () => scenarioReview({ inVSCode, step, shot, treeRow, rowAction, openServersView, notified });
for (const name of args.scenarios) {
	const fn = scenarios[name];
	if (!fn) throw new Error(`unknown scenario ${name}; have ${Object.keys(scenarios).join(', ')}`);
	log(`scenario ${name}`);
	try {
		await fn();
	} catch (e) {
		if (!results.some((r) => !r.ok)) results.push({ name: `${name} setup`, ok: false, error: e });
		log(`scenario ${name} failed: ${e.stack ?? e}`);
	}
}
const failed = results.filter((r) => !r.ok).length;
process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
