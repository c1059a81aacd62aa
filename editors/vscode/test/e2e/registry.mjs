// The e2e scenario "registry" (run.mjs runs it with its helpers; issue
// 34): Browse MCP Registry… against the fixture registry
// (--registry-server: internal/registry/registrytest/cmd/registry-fixture-server,
// on loopback, named by the config's mcp.registry.url). Typing searches;
// the pick asks its three required values, the secret one in a password
// box; the server is installed pinned to its version, the secret kept in
// the secret store and the entry holding ${secret:NAME}; the status bar
// says what was added and the row appears.
//
// Then (with --npm) server-everything as the fixture registry describes
// it, at the version interop/ holds: installed from the pick as
// `npx -y @modelcontextprotocol/server-everything@<version>`, which npx
// resolves from the workspace's node_modules (interop's, linked; the npm
// registry made unreachable, so nothing is fetched); it connects and its
// echo (read-only, so run without asking) runs from its row.
//
// Screenshots: registry-search.png (the quick pick), registry-secret.png
// (the password box), registry-installed.png, registry-everything-echo.png.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';

export async function scenarioRegistry({ args, inVSCode, step, shot, treeRow, rowAction, openServersView, runCommand }) {
	if (!args.registryServer) throw new Error('the registry scenario needs --registry-server (the built internal/registry/registrytest/cmd/registry-fixture-server)');
	// The version of server-everything interop/ holds, which the fixture
	// registry then publishes.
	const everything = args.npm ? JSON.parse(fs.readFileSync(path.join(args.npm, '@modelcontextprotocol', 'server-everything', 'package.json'), 'utf8')).version : '';
	const reg = spawn(args.registryServer, everything ? ['-everything-version', everything] : [], { stdio: ['pipe', 'pipe', 'inherit'] });
	try {
		const [line] = await once(createInterface({ input: reg.stdout }), 'line');
		const { url } = JSON.parse(line);
		let configPath;
		const prepare = (d) => {
			configPath = path.join(d.home, '.freecode', 'config.json');
			fs.mkdirSync(path.dirname(configPath), { recursive: true, mode: 0o700 });
			fs.writeFileSync(configPath, `${JSON.stringify({ mcp: { registry: { url }, servers: [] } }, null, 2)}\n`, { mode: 0o600 });
			if (everything) {
				// The sidecar runs in the workspace folder, and its servers
				// with it: npx finds the package in the project there.
				fs.copyFileSync(path.join(path.dirname(args.npm), 'package.json'), path.join(d.workspace, 'package.json'));
				fs.symlinkSync(args.npm, path.join(d.workspace, 'node_modules'));
				d.env.npm_config_registry = 'http://127.0.0.1:1/';
			}
		};
		await inVSCode('registry', {}, prepare, async (page, d) => {
			const input = page.locator('.quick-input-widget input');
			const box = async (title, value, password) => {
				await page.locator('.quick-input-widget .quick-input-title', { hasText: title }).waitFor();
				const type = await input.getAttribute('type');
				if ((type === 'password') !== password) throw new Error(`the box of ${title} is of type ${type}`);
				await input.fill(value);
				await page.keyboard.press('Enter');
			};
			await step(page, 'MCP Servers view opens', () => openServersView(page));
			await step(page, 'Browse MCP Registry… searches as one types; each server shows name@version and how it runs', async () => {
				await runCommand(page, 'Browse MCP Registry…');
				await page.locator('.quick-input-list .monaco-list-row', { hasText: 'io.example/sqlite@1.0.0' }).waitFor();
				await input.fill('forecast');
				await page.locator('.quick-input-list .monaco-list-row', { hasText: 'io.example/sqlite' }).waitFor({ state: 'detached' });
				await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: 'io.example/weather@1.4.0 · PyPI (uvx)' }).waitFor();
			});
			await shot(page, 'registry-search');
			await step(page, 'the pick asks its required values, the secret one unseen', async () => {
				await page.keyboard.press('Enter');
				await box('(1/3)', 'eu', false);
				await page.locator('.quick-input-widget .quick-input-title', { hasText: '(2/3)' }).waitFor();
				await shot(page, 'registry-secret');
				await box('(2/3)', 'e2e-s3cret-key', true);
				await box('(3/3)', 'acct-7', false);
			});
			await step(page, 'the status bar says what was installed and the row appears', async () => {
				await page.locator('.statusbar', { hasText: 'Installed "weather" from io.example/weather@1.4.0 in config.json, 1 secret kept' }).waitFor();
				await treeRow(page, 'weather').waitFor();
			});
			await shot(page, 'registry-installed');
			await step(page, 'the entry is pinned and holds the secret by reference only', async () => {
				const c = JSON.parse(fs.readFileSync(configPath, 'utf8'));
				const s = c.mcp.servers.find((x) => x.name === 'weather');
				if (!s) throw new Error(`no weather entry in ${JSON.stringify(c)}`);
				if (s.env?.WEATHER_API_KEY !== '${secret:WEATHER_API_KEY}' || s.registry?.version !== '1.4.0' || s.registry?.url !== url) {
					throw new Error(`entry: ${JSON.stringify(s)}`);
				}
				if (fs.readFileSync(configPath, 'utf8').includes('e2e-s3cret-key')) throw new Error('the secret reached the config');
			});
			await step(page, 'the secret typed is in the secret store and in no other file: not a log, not the editor state', async () => {
				const store = path.join(d.home, '.freecode', 'auth', 'tokens.json');
				const holders = filesHolding(d.root, 'e2e-s3cret-key');
				if (holders.length !== 1 || holders[0] !== store) throw new Error(`files holding the secret: ${JSON.stringify(holders)}; want only ${store}`);
			});
			if (!everything) return;
			await step(page, `server-everything installs from the pick, pinned to ${everything}, and connects`, async () => {
				await runCommand(page, 'Browse MCP Registry…');
				await input.fill('everything');
				await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: `io.github.modelcontextprotocol/everything@${everything} · npm (npx)` }).waitFor();
				await page.keyboard.press('Enter');
				await page.locator('.statusbar', { hasText: `Installed "everything" from io.github.modelcontextprotocol/everything@${everything}` }).waitFor();
				await treeRow(page, 'everything').locator('.label-description', { hasText: /^connected/ }).waitFor();
				const c = JSON.parse(fs.readFileSync(configPath, 'utf8'));
				const s = c.mcp.servers.find((x) => x.name === 'everything');
				const want = ['npx', '-y', `@modelcontextprotocol/server-everything@${everything}`];
				if (JSON.stringify(s?.command) !== JSON.stringify(want) || s?.registry?.version !== everything) throw new Error(`entry: ${JSON.stringify(s)}`);
			});
			await step(page, 'its echo runs from its row and answers', async () => {
				await rowAction(page, treeRow(page, 'echo'), 'Run Tool');
				await page.locator('.view-lines', { hasText: 'Arguments for mcp__everything__echo' }).waitFor();
				await page.locator('.view-lines', { hasText: '"message": ""' }).waitFor();
				const editor = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
				await editor.click();
				for (const key of ['Control+End', 'ArrowUp', 'ArrowUp', 'End', 'ArrowLeft']) await page.keyboard.press(key);
				await page.keyboard.insertText('installed from the registry');
				await page.locator('.view-lines', { hasText: '"message": "installed from the registry"' }).waitFor();
				await page.locator('.editor-actions [aria-label^="Run Tool with These Arguments"]').first().click();
				// echo is read-only, as its server describes it: the default
				// rules run it without asking.
				await page.locator('.view-lines', { hasText: 'mcp__everything__echo — ok, allowed by the rules' }).first().waitFor();
				await page.locator('.view-lines', { hasText: 'Echo: installed from the registry' }).first().waitFor();
			});
			await shot(page, 'registry-everything-echo');
		});
	} finally {
		reg.stdin.end();
		await once(reg, 'exit');
	}
}

/** filesHolding lists the files under root whose bytes hold value (symbolic links not followed). */
function filesHolding(root, value) {
	const found = [];
	for (const e of fs.readdirSync(root, { withFileTypes: true, recursive: true })) {
		if (!e.isFile()) continue;
		const p = path.join(e.parentPath, e.name);
		let data;
		try {
			data = fs.readFileSync(p);
		} catch {
			continue; // a socket's or a file gone meanwhile
		}
		if (data.includes(value)) found.push(p);
	}
	return found;
}
