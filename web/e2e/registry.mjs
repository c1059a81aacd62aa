// The web e2e's step Install from registry… (run.mjs runs it, issue 34):
// the fixture MCP Registry (--registry-server) named by the config's
// mcp.registry.url; the dialog searches as one types, asks the weather
// server's values (its API key in a password input), shows a refusal in
// the dialog keeping what was typed, installs; the server connects (the
// fake uvx run.mjs puts on PATH starts it only with the secret), the entry
// is pinned and holds ${secret:NAME}, and the secret is in the secret
// store alone of HOME's files and nowhere in the page.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';

/** startRegistry starts the fixture MCP Registry on loopback and resolves with its URL. */
async function startRegistry(args, started) {
	const registry = spawn(args.registryServer, [], { stdio: ['pipe', 'pipe', 'inherit'] });
	started(registry); // run.mjs's cleanup stops it
	const [line] = await once(createInterface({ input: registry.stdout }), 'line');
	return JSON.parse(line).url;
}

/** files lists the files under dir, recursively. */
function files(dir) {
	return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((d) => d.isFile()).map((d) => path.join(d.parentPath ?? d.path, d.name));
}

/**
 * installFromRegistry is the step Install from registry…: the fixture
 * registry's weather server, whose API key is a secret, through the page's
 * dialog. h holds run.mjs's world (args, config, home, the secret the fake
 * uvx wants) and helpers (check, shot, server), and started, given the
 * registry's process for run.mjs's cleanup.
 */
export async function installFromRegistry(page, h) {
	const { args, config, home, secret: registrySecret, check, shot, server } = h;
	const url = await startRegistry(args, h.started);
	const c = JSON.parse(fs.readFileSync(config, 'utf8'));
	c.mcp.registry = { url };
	fs.writeFileSync(config, JSON.stringify(c, null, 2));

	await page.locator('#install-registry').click();
	const dlg = page.locator('dialog.install');
	await dlg.waitFor();
	const result = (name) => dlg.locator(`ul.results li[data-name="${name}"]`);
	await result('io.example/sqlite').waitFor();
	check((await dlg.locator('ul.results li').count()) === 5, 'the dialog opens on every server of the registry (the 5 not deleted)');
	await dlg.locator('#registry-query').pressSequentially('forecast', { delay: 30 });
	await result('io.example/sqlite').waitFor({ state: 'detached' });
	const weather = result('io.example/weather');
	check(
		(await weather.locator('.head').textContent()) === 'io.example/weather@1.4.0' && (await weather.locator('.runs').textContent()) === 'PyPI (uvx)',
		'typing searches: the match shows name@version and how it runs',
	);
	check(/Forecasts and alerts/.test(await weather.locator('.desc').textContent()), 'and its description');
	await shot(page, 'registry-search');

	await weather.locator('button.pick').click();
	const form = dlg.locator('section.chosen form');
	await form.waitFor();
	check((await dlg.locator('.how').textContent()) === 'Runs as PyPI (uvx): mcp-weather==1.4.0', `the pick says how it would run: ${await dlg.locator('.how').textContent()}`);
	const key = form.locator('[name="WEATHER_API_KEY"]');
	check((await key.getAttribute('type')) === 'password' && (await key.getAttribute('autocomplete')) === 'off', 'the secret value is asked in a password input, autocomplete off');
	check((await form.locator('#install-entry').inputValue()) === 'weather', "the entry's name starts as the registry name's last part");
	// Nothing typed: the dialog says what is missing and sends nothing.
	await dlg.getByRole('button', { name: 'Install', exact: true }).click();
	check(/region is required/.test(await dlg.locator('.errors').textContent()), 'Install with the values missing says which, in the dialog');
	await form.locator('[name="region"]').fill('eu');
	await key.fill(registrySecret);
	await form.locator('[name="WEATHER_ACCOUNT"]').fill('acct-7');
	// A name the config has already: the sidecar refuses, the dialog says so and keeps what was typed.
	await form.locator('#install-entry').fill('demo');
	await dlg.getByRole('button', { name: 'Install', exact: true }).click();
	await dlg.locator('.errors', { hasText: 'already has a server named "demo"' }).waitFor();
	check((await key.inputValue()) === registrySecret && (await form.locator('[name="region"]').inputValue()) === 'eu', "the sidecar's refusal shows in the dialog, and what was typed stays");
	check(!fs.readFileSync(config, 'utf8').includes('io.example/weather'), 'a refused install writes nothing');
	await form.locator('#install-entry').fill('weather');
	await shot(page, 'registry-values');
	await dlg.getByRole('button', { name: 'Install', exact: true }).click();
	await dlg.waitFor({ state: 'detached' });
	const said = (await page.locator('#notices .notice', { hasText: 'Installed weather' }).textContent()).replace(/×$/, '');
	check(said === 'Installed weather from io.example/weather@1.4.0 in config.json, 1 secret kept in tokens.json (only you can read it)', `the page says what was installed: ${said}`);
	await server(page, 'weather').and(page.locator('[data-state="connected"]')).waitFor();
	check(true, 'the installed server shows connected: its uvx was given the secret');
	// The whole page: the notice at its top, the new row at its end.
	await shot(page, 'registry-installed', { fullPage: true });

	const s = JSON.parse(fs.readFileSync(config, 'utf8')).mcp.servers.find((x) => x.name === 'weather');
	check(
		s?.env?.WEATHER_API_KEY === '${secret:WEATHER_API_KEY}' && s.registry?.name === 'io.example/weather' && s.registry?.version === '1.4.0' && s.registry?.url === url,
		`the entry is pinned and holds the secret by reference: ${JSON.stringify({ env: s?.env, registry: s?.registry })}`,
	);
	const holders = files(home).filter((f) => fs.readFileSync(f, 'utf8').includes(registrySecret));
	check(holders.length === 1 && path.basename(holders[0]) === 'tokens.json', `the secret is in the secret store alone of HOME's files (${holders.map((f) => path.relative(home, f)).join(', ')})`);
	check(!(await page.content()).includes(registrySecret), 'the page keeps the value nowhere once sent');
}
