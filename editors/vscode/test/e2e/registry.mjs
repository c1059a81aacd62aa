// The e2e scenario "registry" (run.mjs runs it with its helpers; issue
// 34): Browse MCP Registry… against the fixture registry
// (--registry-server: internal/registry/registrytest/cmd/registry-fixture-server,
// on loopback, named by the config's mcp.registry.url). Typing searches;
// the pick asks its three required values, the secret one in a password
// box; the server is installed pinned to its version, the secret kept in
// the secret store and the entry holding ${secret:NAME}; the status bar
// says what was added and the row appears.
//
// Screenshots: registry-search.png (the quick pick), registry-secret.png
// (the password box), registry-installed.png.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';

export async function scenarioRegistry({ args, inVSCode, step, shot, treeRow, openServersView, runCommand }) {
	if (!args.registryServer) throw new Error('the registry scenario needs --registry-server (the built internal/registry/registrytest/cmd/registry-fixture-server)');
	const reg = spawn(args.registryServer, [], { stdio: ['pipe', 'pipe', 'inherit'] });
	try {
		const [line] = await once(createInterface({ input: reg.stdout }), 'line');
		const { url } = JSON.parse(line);
		let configPath;
		const prepare = (d) => {
			configPath = path.join(d.home, '.freecode', 'config.json');
			fs.mkdirSync(path.dirname(configPath), { recursive: true, mode: 0o700 });
			fs.writeFileSync(configPath, `${JSON.stringify({ mcp: { registry: { url }, servers: [] } }, null, 2)}\n`, { mode: 0o600 });
		};
		await inVSCode('registry', {}, prepare, async (page) => {
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
		});
	} finally {
		reg.stdin.end();
		await once(reg, 'exit');
	}
}
