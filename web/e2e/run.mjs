// The FreeCode MCP page in a real browser: `freecode web` on the demo server,
// in a throw-away HOME and project, and Debian's headless Chromium driven by
// playwright-core (the extension's devDependency, from
// editors/vscode/node_modules). Screenshots go to --out; --docs DIR copies the
// README's ones there (docs/images/web: `make web-screenshots`).
//
//   node web/e2e/run.mjs --bin BIN --npm NODE_MODULES --registry-server PATH --out DIR [--docs DIR] [--chromium PATH] [--keep]
//
// --npm is interop/node_modules (`make npm`), for server-everything; --registry-server the built
// internal/registry/registrytest/cmd/registry-fixture-server, the MCP Registry the install is from.
//
// What it checks, in order:
//   - $BROWSER is given the sign-in file's file: URL, with no code in it (issue 30); the file, opened,
//     posts the code and signs the browser in (no code in the address bar) and is gone; the page
//     shows the demo server connected with its tools marked read-only, writes and destructive;
//   - the page's Content-Security-Policy is in force (an inline script is refused, and reported);
//   - Run… on the destructive delete_file, filled in from its schema, prompts with Deny focused;
//     Deny runs nothing (the file is still there), Allow Once runs it (the file is gone);
//   - the config file edited on disk adds a server, which the page shows connected, no reload;
//   - a second tab sees the same servers, is not shown the first tab's prompt (Escape denies it), and a
//     server stopped in the first tab stops in the second;
//   - the server's log view follows what the server logs;
//   - the second server's entry edited to run server-everything instead: the tools its pins do not know
//     carry review badges, Review… shows echo's changed definition and Accept Change clears its badge;
//     its resources and prompts show, a resource reads, and a prompt's arguments are asked for;
//   - Install from registry… (the fixture registry, named by the config's mcp.registry.url) searches as
//     one types; the server picked asks its values, the secret one in a password input; a sidecar's
//     refusal (a name taken) shows in the dialog with what was typed kept; Install writes the entry
//     pinned, holding ${secret:NAME}, says "Installed …", and the server's row appears connected, started
//     by a uvx on PATH that runs the demo server only if it was given the secret; the value is in no
//     file under HOME but the secret store's, not in the page, and not in the config;
//   - a config file that does not parse shows as a problem, the last good config running, until fixed;
//   - a page on another origin (another loopback port, so the same site) cannot open the WebSocket,
//     even with the browser signed in; and a browser that was not signed in cannot either;
//   - the link `freecode web --no-browser` prints signs another browser in;
//   - no page reported a Content-Security-Policy violation (securitypolicyviolation events and
//     the console's CSP errors, collected from every page, the sign-in file's too) but the one
//     provoked above.
// Every wait has a generous bound for the external processes and nothing else; everything listens
// on loopback only.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installFromRegistry } from './registry.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const { chromium } = createRequire(path.join(repo, 'editors', 'vscode', 'package.json'))('playwright-core');

const startTimeoutMs = 60_000;
const uiTimeoutMs = 30_000;

function parseArgs(argv) {
	const a = { chromium: '/usr/bin/chromium', keep: false };
	for (let i = 0; i < argv.length; i++) {
		const k = argv[i];
		const v = () => {
			if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
			return argv[++i];
		};
		if (k === '--bin') a.bin = path.resolve(v());
		else if (k === '--out') a.out = path.resolve(v());
		else if (k === '--docs') a.docs = path.resolve(v());
		else if (k === '--chromium') a.chromium = v();
		else if (k === '--npm') a.npm = path.resolve(v());
		else if (k === '--registry-server') a.registryServer = path.resolve(v());
		else if (k === '--keep') a.keep = true;
		else throw new Error(`unknown argument ${k}`);
	}
	for (const need of ['bin', 'out', 'npm', 'registryServer']) if (!a[need]) throw new Error(`--${need.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is required`);
	return a;
}

const args = parseArgs(process.argv.slice(2));
fs.mkdirSync(args.out, { recursive: true });

function log(msg) {
	process.stdout.write(`web-e2e: ${msg}\n`);
}

function check(ok, what) {
	if (!ok) throw new Error(`check failed: ${what}`);
	log(`ok: ${what}`);
}

const shots = [];
async function shot(page, name, opts = {}) {
	const file = path.join(args.out, `${name}.png`);
	await page.screenshot({ path: file, ...opts });
	shots.push(file);
	log(`screenshot ${file}`);
}

// The world: HOME (where serve.json goes), the config file, and a project
// directory the demo server works on (--root), so delete_file deletes a
// real file.
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'freecode-web-e2e-'));
const home = path.join(root, 'home');
const project = path.join(root, 'project');
const config = path.join(root, 'config.json');
for (const d of [home, project]) fs.mkdirSync(d, { recursive: true });
fs.writeFileSync(path.join(project, 'notes.txt'), 'delete me\n');
fs.writeFileSync(path.join(project, 'keep.txt'), 'keep me\n');
const demo = path.join(args.bin, 'demo-server');
const entry = (name, extra = []) => ({ name, type: 'local', command: [demo, '--root', project, '--name', name, ...extra] });
fs.writeFileSync(config, JSON.stringify({ mcp: { servers: [entry('demo')] } }, null, 2));

// $BROWSER records what it was given, which the test then opens.
const browserScript = path.join(root, 'browser');
const opened = path.join(root, 'opened');
fs.writeFileSync(browserScript, `#!/bin/sh\nprintf '%s\\n' "$@" >'${opened}'\n`, { mode: 0o700 });
// Secrets go to the 0600 file under this HOME, never to the keychain of
// whoever runs the test.
// The server installed from the registry runs `uvx mcp-weather==…`: this
// uvx, first on the PATH the sidecar and its servers get, runs the demo
// server in its place only if it was given the secret typed in the page (it
// holds the value's hash, and lives outside HOME).
const registrySecret = 'e2e-registry-s3cret-42';
const fakeBin = path.join(root, 'bin');
fs.mkdirSync(fakeBin);
fs.writeFileSync(
	path.join(fakeBin, 'uvx'),
	`#!/bin/sh\n[ "$(printf %s "$WEATHER_API_KEY" | sha256sum | cut -c1-64)" = "${createHash('sha256').update(registrySecret).digest('hex')}" ] || { echo "uvx (e2e): wrong WEATHER_API_KEY" >&2; exit 3; }\nexec '${demo}' --root '${project}' --name weather\n`,
	{ mode: 0o755 },
);
const env = { ...process.env, HOME: home, FREECODE_CONFIG: config, BROWSER: browserScript, FREECODE_TOKEN_STORE: 'file', PATH: `${fakeBin}${path.delimiter}${process.env.PATH}` };
delete env.XDG_CONFIG_HOME;
// The registry's index is cached under XDG_CACHE_HOME, else HOME's .cache: the throw-away HOME's.
delete env.XDG_CACHE_HOME;

let web;
let browser;
let other;
let registry;

async function cleanup() {
	await browser?.close().catch(() => {});
	other?.close();
	if (registry && registry.exitCode === null) {
		registry.stdin.end();
		await once(registry, 'exit').catch(() => {});
	}
	if (web && web.exitCode === null) {
		web.kill('SIGTERM');
		const t = setTimeout(() => web.kill('SIGKILL'), 10_000);
		await once(web, 'exit').catch(() => {});
		clearTimeout(t);
	}
	// A `freecode web` that left its sidecar running in the background is
	// stopped through serve.json, which names its pid.
	const sf = path.join(home, '.freecode', 'serve.json');
	let pid;
	try {
		pid = JSON.parse(fs.readFileSync(sf, 'utf8')).pid;
		process.kill(pid, 'SIGTERM');
	} catch {}
	// It stops its servers first; its log is kept beside the screenshots.
	for (let i = 0; pid && i < 100; i++) {
		try {
			process.kill(pid, 0);
		} catch {
			break;
		}
		await new Promise((r) => setTimeout(r, 100));
	}
	try {
		fs.copyFileSync(path.join(home, '.freecode', 'web.log'), path.join(args.out, 'sidecar.log'));
	} catch {}
	if (!args.keep) fs.rmSync(root, { recursive: true, force: true, maxRetries: 5 });
	else log(`kept ${root}`);
}

for (const sig of ['SIGINT', 'SIGTERM']) {
	process.on(sig, () => {
		void cleanup().finally(() => process.exit(1));
	});
}

/** runWeb runs `freecode web` in the project with extra arguments and resolves with what it printed once it exited 0. */
async function runWeb(extra = []) {
	web = spawn(path.join(args.bin, 'freecode'), ['web', ...extra], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
	let out = '';
	const errLog = fs.createWriteStream(path.join(args.out, 'freecode-web.log'), { flags: 'a' });
	return new Promise((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`freecode web did not end within ${startTimeoutMs} ms:\n${out}`)), startTimeoutMs);
		const take = (chunk) => {
			errLog.write(chunk);
			out += chunk.toString();
		};
		web.stdout.on('data', take);
		web.stderr.on('data', take);
		web.on('exit', (code) => {
			clearTimeout(timer);
			errLog.end();
			if (code === 0) resolve(out);
			else reject(new Error(`freecode web ${extra.join(' ')} exited ${code}:\n${out}`));
		});
	});
}

// Every Content-Security-Policy violation of every page of a context: the
// page's securitypolicyviolation events (listened for before any script of
// the page runs) and the console's errors about the policy.
const cspViolations = [];
async function watchCsp(context) {
	await context.exposeBinding('__freecodeCspViolation', (_source, v) => cspViolations.push(v));
	await context.addInitScript(() => {
		document.addEventListener('securitypolicyviolation', (e) => {
			window.__freecodeCspViolation(`${e.effectiveDirective} refused ${e.blockedURI || 'an inline one'} in ${e.documentURI}`);
		});
	});
	context.on('console', (m) => {
		if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspViolations.push(`console: ${m.text()}`);
	});
}

/** until polls cond every 50 ms until it holds, within uiTimeoutMs. */
async function until(cond, what) {
	for (const end = Date.now() + uiTimeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
		if (await cond()) return;
	}
	throw new Error(`timed out waiting for ${what}`);
}

const server = (page, name) => page.locator(`section.server[data-server="${name}"]`);

async function runDelete(page, file) {
	await server(page, 'demo').locator('li.tool[data-tool$="delete_file"] button.run').click();
	const form = page.locator('dialog.run');
	await form.waitFor();
	// The form is made from the tool's schema: its one required field, path.
	await form.locator('[name="path"]').fill(file);
	await form.getByRole('button', { name: 'Run', exact: true }).click();
	const prompt = page.locator('dialog.permission');
	await prompt.waitFor();
	return prompt;
}

async function main() {
	await runWeb();
	const fileURL = fs.readFileSync(opened, 'utf8').trim();
	const sf = JSON.parse(fs.readFileSync(path.join(home, '.freecode', 'serve.json'), 'utf8'));
	const base = new URL(`http://${sf.address.replace(/^ws:\/\//, '')}/`);
	log(`freecode web gave $BROWSER ${fileURL}`);
	check(/^file:\/\/\/[^?#]+\.html$/.test(fileURL), '$BROWSER is given the sign-in file, a file: URL with no code in it');
	const signInFile = fileURLToPath(fileURL);
	check((fs.statSync(signInFile).mode & 0o777) === 0o600, 'the sign-in file is readable by its user only (0600)');

	browser = await chromium.launch({
		executablePath: args.chromium,
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
	});
	const ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
	ctx.setDefaultTimeout(uiTimeoutMs);
	await watchCsp(ctx);
	const page = await ctx.newPage();
	const pageErrors = [];
	page.on('pageerror', (e) => pageErrors.push(e.message));
	// The session's warnings: a message that did not fit the protocol, a refresh that failed.
	page.on('console', (m) => {
		if (m.type() === 'warning' && m.text().startsWith('FreeCode:')) pageErrors.push(m.text());
	});

	// Signed in by the sign-in file: it posts the code, and the page comes
	// with no code in its address; the file is gone once the code is spent.
	await page.goto(fileURL, { waitUntil: 'commit' });
	await page.waitForURL(base.href);
	check(page.url() === base.href, `the sign-in file signs in and leaves the page's address bare (${page.url()})`);
	check(!fs.existsSync(signInFile), 'the sign-in file is gone once its code was spent');
	await server(page, 'demo').and(page.locator('[data-state="connected"]')).waitFor();
	check(true, 'the page shows the demo server connected');
	check(/^pid \d+$/.test(await server(page, 'demo').locator('.pid').textContent()), 'the server shows its pid');
	const marks = async (tool) => (await server(page, 'demo').locator(`li.tool[data-tool$="${tool}"] .mark`).first().textContent()).trim();
	check((await marks('delete_file')) === 'destructive', 'delete_file is marked destructive');
	check((await marks('read_file')) === 'read-only', 'read_file is marked read-only');
	check((await marks('create_issue')) === 'writes', 'create_issue is marked as writing');
	await page.evaluate(() => (window.__notReloaded = true));
	await shot(page, 'servers');

	// The policy is in force, and a violation is seen: an inline script is
	// refused and reported.
	check(cspViolations.length === 0, `no Content-Security-Policy violation while the page loaded${cspViolations.length ? `: ${cspViolations.join('; ')}` : ''}`);
	await page.evaluate(() => {
		const s = document.createElement('script');
		s.textContent = 'window.__inlineRan = true';
		document.head.append(s);
	});
	const event = () => cspViolations.find((v) => !v.startsWith('console:'));
	await until(() => event() && cspViolations.some((v) => v.startsWith('console:')), 'the refused inline script to be reported, as an event and on the console');
	check((await page.evaluate(() => window.__inlineRan)) === undefined && /^script-src/.test(event()), `the page's policy refuses an inline script, and the refusal is seen (${event()})`);
	cspViolations.length = 0;

	// A destructive call prompts; Deny (the focused button) runs nothing.
	let prompt = await runDelete(page, 'notes.txt');
	check((await prompt.locator('button.deny').evaluate((b) => b === document.activeElement)) === true, 'Deny has the focus: Enter denies');
	check(/destructive/.test(await prompt.locator('pre.detail').textContent()), 'the prompt says the tool is destructive');
	await shot(page, 'permission');
	await prompt.getByRole('button', { name: 'Deny', exact: true }).click();
	// The newest run is first; it has a decision once its call answered.
	const latest = page.locator('#runs li.run').first();
	await latest.and(page.locator('[data-decision]')).waitFor();
	check((await latest.getAttribute('data-decision')) === 'denied', 'Deny: the call is denied');
	check(fs.existsSync(path.join(project, 'notes.txt')), 'Deny: notes.txt is still there');

	// Allow Once runs it.
	prompt = await runDelete(page, 'notes.txt');
	await prompt.getByRole('button', { name: 'Allow Once', exact: true }).click();
	await latest.and(page.locator('[data-decision]')).waitFor();
	check((await latest.getAttribute('data-decision')) === 'asked', 'Allow Once: the call was asked and allowed');
	check((await latest.getAttribute('class')).includes('ok'), 'Allow Once: the call succeeded');
	check(!fs.existsSync(path.join(project, 'notes.txt')), 'Allow Once: notes.txt is gone');
	check(fs.existsSync(path.join(project, 'keep.txt')), 'nothing else was deleted');
	// The run's entry says its title once, without the editor's ===== underline.
	const body = await latest.locator('pre').innerText();
	check(!/^=+$/m.test(body) && !body.includes('mcp__demo__delete_file —'), `a run's entry shows its title once: ${JSON.stringify(body.slice(0, 80))}`);

	// The form shows an enum's values as they are, not as JSON.
	await server(page, 'demo').locator('li.tool[data-tool="mcp__demo__create_issue"] button.run').click();
	const form = page.locator('dialog[open]');
	const options = await form.locator('select[name="priority"] option').allInnerTexts();
	check(options.includes('high') && !options.some((o) => o.includes('"')), `an enum's options read as its values: ${options.join(', ')}`);
	await shot(page, 'form');
	await form.getByRole('button', { name: 'Cancel', exact: true }).click();

	// A config edit on disk adds a server; the page shows it, no reload.
	fs.writeFileSync(config, JSON.stringify({ mcp: { servers: [entry('demo'), entry('second')] } }, null, 2));
	await server(page, 'second').and(page.locator('[data-state="connected"]')).waitFor();
	check((await page.evaluate(() => window.__notReloaded)) === true, 'a config edit adds a server, connected, without a reload');
	await shot(page, 'added');

	// A second tab sees the same state, and what the first does.
	const tab2 = await ctx.newPage();
	await tab2.goto(base.href);
	await server(tab2, 'demo').and(tab2.locator('[data-state="connected"]')).waitFor();
	await server(tab2, 'second').and(tab2.locator('[data-state="connected"]')).waitFor();
	check(true, 'a second tab sees both servers connected');
	// A prompt goes only to the tab whose call caused it.
	fs.writeFileSync(path.join(project, 'other.txt'), 'x\n');
	prompt = await runDelete(page, 'other.txt');
	check((await tab2.locator('dialog.permission').count()) === 0, 'the prompt of a call of the first tab is not shown in the second');
	await prompt.press('Escape');
	await latest.and(page.locator('[data-decision]')).waitFor();
	check((await latest.getAttribute('data-decision')) === 'denied' && fs.existsSync(path.join(project, 'other.txt')), 'Escape denies: other.txt is still there');
	await server(page, 'second').getByRole('button', { name: 'Stop', exact: true }).click();
	await server(tab2, 'second').and(tab2.locator('[data-state="stopped"]')).waitFor();
	check(true, 'a server stopped in the first tab shows stopped in the second');

	// The log view follows: starting the server again logs its start.
	await server(tab2, 'second').locator('details[data-part="log"] > summary').click();
	await server(page, 'second').getByRole('button', { name: 'Start', exact: true }).click();
	await server(tab2, 'second').locator('pre.log .line', { hasText: 'connected' }).last().waitFor();
	check(true, "the second tab's log view shows the server's start as it happens");
	// In the page in one step: the log is redrawn as its lines come, and
	// an element found before a redraw is detached by the time it is
	// scrolled to (seen in CI).
	await tab2.evaluate(() => document.querySelector('section.server[data-server="second"] pre.log')?.scrollIntoView({ block: 'nearest' }));
	await shot(tab2, 'log');
	await tab2.close();

	// Pinned definitions: "second" now runs server-everything, whose tools
	// are not the ones its pins hold: echo's definition changed, the rest
	// are new. Review… shows the change; Accept Change clears the badge.
	const everything = path.join(args.npm, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
	check(fs.existsSync(everything), `server-everything is installed (${everything})`);
	fs.writeFileSync(
		config,
		JSON.stringify({ mcp: { servers: [entry('demo'), { name: 'second', type: 'local', command: [process.execPath, everything, 'stdio'] }] } }, null, 2),
	);
	const echo = server(page, 'second').locator('li.tool[data-tool="mcp__second__echo"]');
	await echo.locator('.mark.review').waitFor();
	check((await echo.locator('.mark.review').textContent()) === 'definition changed', "echo of the edited server is badged: its definition changed");
	check((await server(page, 'second').locator('li.tool .mark.review', { hasText: /^new$/ }).count()) > 0, 'tools the pins do not know are badged new');
	await echo.getByRole('button', { name: 'Review…' }).click();
	const diff = page.locator('dialog.review');
	await diff.waitFor();
	check(/description/i.test(await diff.locator('pre').textContent()), 'Review… shows how the definition changed');
	await shot(page, 'review');
	await diff.getByRole('button', { name: 'Accept Change' }).click();
	await echo.locator('.mark.review').waitFor({ state: 'detached' });
	check(true, 'Accept Change clears the badge');

	// Its resources and prompts.
	const resources = server(page, 'second').locator('details[data-part="resources"]');
	await resources.waitFor();
	check((await server(page, 'second').locator('details[data-part="prompts"]').count()) === 1, 'the edited server shows its prompts');
	await resources.locator('summary').click();
	await resources.locator('li button').first().click();
	const doc = page.locator('dialog.doc');
	await doc.waitFor();
	check(((await doc.locator('pre').textContent()) ?? '').length > 0, 'a resource reads into a document');
	await doc.getByRole('button', { name: 'Close' }).click();
	// A prompt with arguments asks for them first, required ones marked.
	const prompts = server(page, 'second').locator('details[data-part="prompts"]');
	await prompts.locator('summary').click();
	await prompts.locator('li[data-item="args-prompt"] button').click();
	const promptForm = page.locator('dialog.run');
	await promptForm.waitFor();
	await promptForm.locator('[name="city"]').fill('Lyon');
	await promptForm.getByRole('button', { name: 'Get', exact: true }).click();
	await doc.waitFor();
	check(/weather in Lyon/.test(await doc.locator('pre').textContent()), "a prompt's arguments go with it (args-prompt: Lyon)");
	await doc.getByRole('button', { name: 'Close' }).click();

	// A server whose entry names a secret that is not set fails at once and
	// says which; Set Secret… asks it in a password input, and the server
	// starts with it. The value stays in the secret store alone.
	const secretValue = 'e2e-s3cret-value-7f1c';
	const withSecret = JSON.parse(fs.readFileSync(config, 'utf8'));
	withSecret.mcp.servers.push({ ...entry('vault'), env: { VAULT_TOKEN: '${secret:VAULT_TOKEN}' } });
	fs.writeFileSync(config, JSON.stringify(withSecret, null, 2));
	const vault = server(page, 'vault');
	await vault.and(page.locator('[data-state="failed"]')).waitFor();
	check((await vault.locator('h2 .state').textContent()) === 'needs secret VAULT_TOKEN', 'a server whose secret is not set says what it needs');
	await vault.getByRole('button', { name: 'Set Secret…', exact: true }).click();
	const ask = page.locator('dialog.secret');
	await ask.waitFor();
	const secretInput = ask.locator('input');
	check(
		(await secretInput.getAttribute('type')) === 'password' && (await secretInput.getAttribute('autocomplete')) === 'off',
		'the secret is asked in a password input, autocomplete off',
	);
	check(
		/^Value of the secret VAULT_TOKEN for server vault \(kept in your OS keychain, never in a file of your project\)$/.test(await ask.locator('label').textContent()),
		'the input says whose secret it is and where it is kept',
	);
	await ask.getByRole('button', { name: 'Save', exact: true }).click();
	check(/Type the value/.test(await ask.locator('.errors').textContent()), 'an empty value is not sent');
	await secretInput.fill(secretValue);
	await shot(page, 'secret');
	await secretInput.press('Enter');
	await ask.waitFor({ state: 'detached' });
	await vault.and(page.locator('[data-state="connected"]')).waitFor();
	const saved = await page.locator('#notices .notice', { hasText: 'Secret VAULT_TOKEN saved in' }).textContent();
	check(/; vault started/.test(saved), `Set Secret… starts the server with it and says so: ${saved.replace(/×$/, '')}`);
	check(!(await page.content()).includes(secretValue), 'the page keeps the value nowhere once sent');
	check(!fs.readFileSync(config, 'utf8').includes(secretValue), 'the config file does not hold it');

	await installFromRegistry(page, {
		args, config, home, secret: registrySecret, check, shot, server,
		started: (proc) => {
			registry = proc;
		},
	});

	// A config file that does not parse: the page says so, where, and that
	// the last good config runs; fixed, the problem goes.
	const good = fs.readFileSync(config, 'utf8');
	fs.writeFileSync(config, good.replace('"servers"', '"servers" "oops"'));
	const problem = page.locator('#servers .problem');
	await problem.waitFor();
	check(/last good/.test(await problem.textContent()), `a broken config shows as a problem, the last good one running (${(await problem.locator('strong').textContent()).trim()})`);
	check((await server(page, 'demo').getAttribute('data-state')) === 'connected', 'the servers keep running meanwhile');
	await shot(page, 'problem');
	fs.writeFileSync(config, good);
	await problem.waitFor({ state: 'detached' });
	check(true, 'the problem goes once the file is fixed');

	// Another origin cannot connect: a page on another loopback port (the
	// same site, so the browser would send the sidecar's cookie) tries the
	// sidecar's WebSocket.
	other = http.createServer((_req, res) => {
		res.writeHead(200, { 'content-type': 'text/html' });
		res.end('<!doctype html><title>other</title><p>another origin</p>');
	});
	other.listen(0, '127.0.0.1');
	await once(other, 'listening');
	const evil = await ctx.newPage();
	await evil.goto(`http://127.0.0.1:${other.address().port}/`);
	const target = `ws://${base.host}/rpc`;
	const tryOpen = (p) =>
		p.evaluate(
			(u) =>
				new Promise((resolve) => {
					const ws = new WebSocket(u);
					ws.onopen = () => {
						ws.close();
						resolve('open');
					};
					ws.onerror = () => resolve('refused');
					ws.onclose = () => resolve('refused');
				}),
			target,
		);
	check((await tryOpen(evil)) === 'refused', `a page on another origin cannot open ${target}`);
	await evil.close();

	// A browser that was not signed in cannot connect either, and the page says what to do.
	const fresh = await browser.newContext();
	await watchCsp(fresh);
	const stranger = await fresh.newPage();
	const resp = await stranger.goto(base.href);
	// Either the sidecar does not serve the page to it, or the page's socket is refused.
	await stranger.waitForFunction(() => document.querySelector('#summary')?.getAttribute('data-sidecar') !== 'starting');
	const state = await stranger.evaluate(() => document.querySelector('#summary')?.getAttribute('data-sidecar') ?? 'not the page');
	check((await stranger.locator('section.server').count()) === 0, `a browser without the sign-in sees no server (HTTP ${resp?.status()}, page: ${state})`);
	// It is told it is not signed in, not that the sidecar is stopped.
	const said = await stranger.locator('#summary').innerText();
	check(state === 'signedOut' && /not signed in/i.test(said) && !/stopped/i.test(said), `a browser without the sign-in is told so: ${state}, "${said}"`);
	await shot(stranger, 'signed-out');
	await fresh.close();

	// The link --no-browser prints (to the terminal) signs another browser in.
	const printed = /http:\/\/127\.0\.0\.1:\d+\/\?code=[0-9a-f]+/.exec(await runWeb(['--no-browser']))?.[0];
	check(printed?.startsWith(base.href), '`freecode web --no-browser` prints a sign-in link for the same sidecar');
	const linked = await browser.newContext();
	await watchCsp(linked);
	const viaLink = await linked.newPage();
	await viaLink.goto(printed);
	check(viaLink.url() === base.href, `the printed link signs in and leaves the code out of the address (${viaLink.url()})`);
	await server(viaLink, 'demo').and(viaLink.locator('[data-state="connected"]')).waitFor();
	check(true, 'the browser signed in by the printed link sees the demo server connected');
	await linked.close();

	check(cspViolations.length === 0, `no Content-Security-Policy violation on any page${cspViolations.length ? `: ${cspViolations.join('; ')}` : ''}`);
	check(pageErrors.length === 0, `no script error or session warning on the page${pageErrors.length ? `: ${pageErrors.join('; ')}` : ''}`);

	if (args.docs) {
		fs.mkdirSync(args.docs, { recursive: true });
		const readme = ['servers', 'permission', 'review'];
		for (const f of shots.filter((f) => readme.includes(path.basename(f, '.png')))) fs.copyFileSync(f, path.join(args.docs, path.basename(f)));
		log(`copied the README's screenshots (${readme.join(', ')}) to ${args.docs}`);
	}
}

let failed = false;
try {
	await main();
	log('PASS');
} catch (e) {
	failed = true;
	log(`FAIL: ${e.stack ?? e}`);
} finally {
	await cleanup();
}
process.exit(failed ? 1 : 0);
