// The e2e scenario "real-apps" (run.mjs runs it with its helpers): three of
// the MCP Apps project's own example servers, from npm, as a user would
// add them: basic-vanillajs (a tool call, a log, a link), budget-allocator
// (a chart drawn from its tool's structured result) and system-monitor
// (which polls a tool only views may call). Each view renders in its
// webview; its own calls meet FreeCode's permission rules, as the view's
// calls, not a model's; the editor's theme reaches it as the Apps
// extension's host context and style variables, at start and when the
// user changes the theme; a link it opens goes through VS Code's own
// question.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { appFrame as viewFrame } from './apps.mjs';

/** until polls fn until it returns something truthy, or throws what it last saw. */
async function until(page, what, fn, timeoutMs) {
	const end = Date.now() + timeoutMs;
	let last;
	for (;;) {
		last = await fn();
		if (last && last.ok) return last;
		if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(last)} after ${timeoutMs} ms`);
		await page.waitForTimeout(250);
	}
}

/** What the view's root holds of the host context: its theme and one style variable. */
function themeSeen(frame) {
	return frame.evaluate(() => ({
		theme: document.documentElement.dataset.theme,
		background: document.documentElement.style.getPropertyValue('--color-background-primary').trim(),
		font: document.documentElement.style.getPropertyValue('--font-sans').trim(),
	}));
}

/** The editor background VS Code gives the webview page that holds the frame. */
function editorBackground(frame) {
	return frame.parentFrame().evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background').trim());
}

export async function scenarioRealApps(h) {
	const { args, inVSCode, step, shot, treeRow, rowAction, openServersView, log, uiTimeoutMs } = h;
	if (!args.npm) throw new Error('the real-apps scenario needs --npm (interop/node_modules, which `make npm` fills)');
	const bin = (name) => {
		const p = path.join(args.npm, '.bin', name);
		if (!fs.existsSync(p)) throw new Error(`no ${p}: run make npm`);
		return p;
	};
	const servers = [
		{ name: 'vanilla', type: 'local', command: [bin('mcp-server-basic-vanillajs'), '--stdio'] },
		{ name: 'budget', type: 'local', command: [bin('mcp-budget-allocator-server'), '--stdio'] },
		{ name: 'sysmon', type: 'local', command: [bin('mcp-system-monitor-server'), '--stdio'] },
	];
	const prepare = (d) => {
		fs.mkdirSync(path.join(d.home, '.freecode'), { recursive: true, mode: 0o700 });
		fs.writeFileSync(path.join(d.home, '.freecode', 'config.json'), `${JSON.stringify({ mcp: { servers } }, null, 2)}\n`, { mode: 0o600 });
	};

	await inVSCode('real-apps', {}, prepare, async (page) => {
		const dialog = page.locator('.monaco-dialog-box');
		/** allow answers the permission prompt for id, which must say the view asks when byView. */
		const allow = async (id, button, byView) => {
			await dialog.getByText(`Allow FreeCode to run ${id}?`).waitFor();
			if (byView) await dialog.getByText(`Asked by: the MCP Apps view of ${byView} (a page the server shows), not a model.`).waitFor();
			if (button === 'Allow Once' || button === 'Deny') {
				await dialog.getByRole('button', { name: button }).click();
				return;
			}
			// The "always" choices sit behind one button that asks where.
			await dialog.getByRole('button', { name: /^Always Allow/ }).click();
			await page.locator('.quick-input-list .monaco-list-row', { hasText: button }).first().click();
		};
		/** run runs a tool that takes no arguments from its row, allowing it once: it is not annotated. */
		const run = async (tool, id) => {
			await rowAction(page, treeRow(page, tool), 'Run Tool');
			await allow(id, 'Allow Once');
		};

		await step(page, 'MCP Servers view opens', () => openServersView(page));
		await step(page, 'the three Apps servers from npm connect', async () => {
			for (const s of servers) {
				const row = treeRow(page, s.name);
				await row.locator('.label-description', { hasText: /^connected/ }).waitFor();
				log(`${s.name}: ${await row.locator('.label-description').textContent()}`);
			}
		});

		let frame;
		await step(page, "basic-vanillajs: get-time's view renders the time its result carries", async () => {
			await run('get-time', 'mcp__vanilla__get-time');
			frame = await viewFrame(page, '#server-time', uiTimeoutMs);
			await until(page, 'the time shown', async () => {
				const t = (await frame.locator('#server-time').textContent()).trim();
				return { ok: /^\d{4}-\d\d-\d\dT/.test(t), t };
			}, uiTimeoutMs);
		});
		await step(page, "the editor's theme reaches the view: its theme and the Apps style variables", async () => {
			const want = await editorBackground(frame);
			const seen = await until(page, 'the dark theme in the view', async () => {
				const t = await themeSeen(frame);
				return { ok: t.theme === 'dark' && t.background !== '' && t.background === want && t.font !== '', ...t };
			}, uiTimeoutMs);
			log(`the view's root: ${JSON.stringify(seen)}; the editor background ${want}`);
		});
		await shot(page, 'real-apps-vanilla');
		await step(page, "the view's own Get Server Time asks first, as the view's call, and shows the new time", async () => {
			const before = (await frame.locator('#server-time').textContent()).trim();
			await frame.locator('#get-time-btn').click();
			await allow('mcp__vanilla__get-time', 'Allow Once', 'vanilla');
			await until(page, 'a new time', async () => {
				const t = (await frame.locator('#server-time').textContent()).trim();
				return { ok: /^\d{4}-\d\d-\d\dT/.test(t) && t !== before, t, before };
			}, uiTimeoutMs);
		});
		await step(page, "a theme change reaches the open view (ui/notifications/host-context-changed)", async () => {
			const dark = await themeSeen(frame);
			// As a user does: Preferences: Color Theme, then the theme's row.
			// (the palette puts "Browse Color Themes in Marketplace" first: the row is clicked)
			await page.keyboard.press('F1');
			const input = page.locator('.quick-input-widget input');
			await input.fill('>Preferences: Color Theme');
			await page.locator('.quick-input-list .monaco-list-row', { hasText: /^Preferences: Color Theme/ }).first().click();
			await input.fill('Light Modern');
			await page.locator('.quick-input-list .monaco-list-row.focused', { hasText: 'Light Modern' }).first().waitFor();
			await page.keyboard.press('Enter');
			const seen = await until(page, 'the light theme in the view', async () => {
				const t = await themeSeen(frame);
				return { ok: t.theme === 'light' && t.background !== '' && t.background !== dark.background, ...t };
			}, uiTimeoutMs);
			log(`after the theme change, the view's root: ${JSON.stringify(seen)}`);
		});
		await shot(page, 'real-apps-vanilla-light');
		await step(page, "the view's Open Link goes through VS Code's own question, and nothing opens on Cancel", async () => {
			await frame.locator('#open-link-btn').click();
			await dialog.getByText(/open the external website/).waitFor();
			await dialog.getByText('https://modelcontextprotocol.io/').waitFor();
			await shot(page, 'real-apps-open-link');
			await dialog.getByRole('button', { name: 'Cancel' }).click();
			await dialog.waitFor({ state: 'hidden' });
		});

		await step(page, "budget-allocator: the view draws its chart and sliders from the tool's result", async () => {
			await run('get-budget-data', 'mcp__budget__get-budget-data');
			frame = await viewFrame(page, '#budget-chart', uiTimeoutMs);
			await frame.locator('#sliders-container input[type="range"]').first().waitFor();
			await until(page, 'the budget allocated', async () => {
				const t = (await frame.locator('#status-bar').textContent()).replace(/\s+/g, ' ').trim();
				return { ok: /Allocated: \$[1-9]/.test(t), t };
			}, uiTimeoutMs);
			const drawn = await frame.evaluate(() => {
				const c = document.getElementById('budget-chart');
				return c.width > 0 && c.height > 0;
			});
			if (!drawn) throw new Error('the chart has no size');
			log(`budget: ${await frame.locator('#sliders-container input[type="range"]').count()} sliders; ${(await frame.locator('#comparison-summary').textContent()).trim()}`);
		});
		await shot(page, 'real-apps-budget');

		await step(page, 'system-monitor: its view polls poll-system-stats, a tool for views only, once the user allows it always', async () => {
			await run('get-system-info', 'mcp__sysmon__get-system-info');
			frame = await viewFrame(page, '#poll-toggle-btn', uiTimeoutMs);
			await until(page, 'the host name', async () => {
				const t = (await frame.locator('#info-hostname').textContent()).trim();
				return { ok: t !== '' && t !== '--', t };
			}, uiTimeoutMs);
			// The view starts polling by itself: its first poll asks (the tool is not
			// annotated), the polls after it wait behind that question, not beside it.
			await allow('mcp__sysmon__poll-system-stats', 'Always Allow Everywhere', 'sysmon');
			// Count the tool results the view receives from the host from now on.
			await frame.evaluate(() => {
				window.__results = 0;
				window.addEventListener('message', (e) => {
					if (e.data && e.data.result && Array.isArray(e.data.result.content) && !e.data.result.isError) window.__results++;
				});
			});
			// Later polls run without asking again: three results come in.
			const polled = await until(page, 'three polls answered', async () => {
				if (await dialog.isVisible().catch(() => false)) throw new Error('a later poll asked again though it was allowed always');
				const n = await frame.evaluate(() => window.__results);
				const mem = (await frame.locator('#memory-percent').textContent()).trim();
				return { ok: n >= 3 && /^\d+(\.\d+)?%$/.test(mem), n, mem };
			}, uiTimeoutMs);
			log(`system-monitor: ${polled.n} polls answered, memory ${polled.mem}`);
			await frame.locator('#poll-toggle-btn', { hasText: 'Stop' }).click();
		});
		await shot(page, 'real-apps-sysmon');
	});
}
