// The e2e scenario "apps" (run.mjs runs it with its helpers): the demo
// server started with --apps, its show_files run from the view; the
// result opens the tool's MCP Apps view in a webview, where the view
// lists the workspace's files. In the view's frame: no VS Code API, no
// reach into the page, no network (a loopback server that would see a
// request sees none). Its Delete button asks for the destructive
// delete_file: the permission prompt shows, saying the view asks, Deny runs nothing (the file is
// still there and the view says the call was denied), Allow Once deletes
// the file and the view lists the rest.

import * as fs from 'node:fs';
import * as http from 'node:http';
import { once } from 'node:events';
import * as path from 'node:path';

/** appFrame waits for the view's frame (written inline, so about:srcdoc) that holds selector. */
export async function appFrame(page, selector, timeoutMs) {
	const end = Date.now() + timeoutMs;
	for (;;) {
		for (const f of page.frames()) {
			if (f.url() !== 'about:srcdoc') continue;
			if ((await f.locator(selector).count().catch(() => 0)) > 0) return f;
		}
		if (Date.now() > end) throw new Error(`no view frame with ${selector} within ${timeoutMs} ms; frames: ${page.frames().map((f) => f.url()).join(', ')}`);
		await page.waitForTimeout(250);
	}
}

export async function scenarioApps(h) {
	const { args, inVSCode, step, shot, treeRow, rowAction, openServersView, log, uiTimeoutMs } = h;
	if (!args.bin) throw new Error('the apps scenario needs --bin (the directory with demo-server)');
	const demo = path.join(args.bin, 'demo-server');
	if (!fs.existsSync(demo)) throw new Error(`no ${demo}: run make build`);

	// A request the view's policy must keep from leaving: counted here.
	let hits = 0;
	const probe = http.createServer((req, res) => {
		hits++;
		res.writeHead(200, { 'access-control-allow-origin': '*' });
		res.end('reached');
	});
	probe.listen(0, '127.0.0.1');
	await once(probe, 'listening');
	const probeUrl = `http://127.0.0.1:${probe.address().port}/`;

	let victim;
	const prepare = (d) => {
		fs.mkdirSync(path.join(d.home, '.freecode'), { recursive: true, mode: 0o700 });
		const servers = [{ name: 'demo', type: 'local', command: [demo, '--root', d.workspace, '--apps'] }];
		fs.writeFileSync(path.join(d.home, '.freecode', 'config.json'), `${JSON.stringify({ mcp: { servers } }, null, 2)}\n`, { mode: 0o600 });
		fs.writeFileSync(path.join(d.workspace, 'README.md'), '# e2e workspace\n');
		fs.mkdirSync(path.join(d.workspace, 'notes'));
		fs.writeFileSync(path.join(d.workspace, 'notes', 'todo.md'), '- ship the view\n');
		victim = path.join(d.workspace, 'delete-me.txt');
		fs.writeFileSync(victim, "the view's Delete button deletes this file once allowed\n");
	};
	try {
		await inVSCode('apps', {}, prepare, async (page) => {
			await step(page, 'MCP Servers view opens', () => openServersView(page));
			await step(page, 'the demo server with --apps is connected, show_files among its tools', async () => {
				await treeRow(page, 'demo').locator('.label-description', { hasText: /^connected · 8 tools$/ }).waitFor();
				await treeRow(page, 'show_files').locator('.label-description', { hasText: 'read-only' }).waitFor();
			});

			let frame;
			await step(page, "running show_files opens its view in a webview, listing the workspace's files", async () => {
				const row = treeRow(page, 'show_files');
				await rowAction(page, row, 'Run Tool');
				await page.locator('.view-lines', { hasText: 'Arguments for mcp__demo__show_files' }).waitFor();
				await page.locator('.editor-actions [aria-label^="Run Tool with These Arguments"]').first().click();
				await page.locator('.tab', { hasText: 'Show project files — view' }).waitFor();
				frame = await appFrame(page, '#files li', uiTimeoutMs);
				for (const f of ['README.md', 'delete-me.txt', 'notes/todo.md']) await frame.locator('#files li span', { hasText: new RegExp(`^${f.replace('.', '\\.')}$`) }).waitFor();
				await frame.locator('#title', { hasText: 'Project files (3)' }).waitFor();
				await frame.locator('#status', { hasText: 'Delete asks the host to call delete_file.' }).waitFor();
				// The handshake happened: the view knows its host.
				const host = await frame.evaluate(() => document.documentElement.dataset.host);
				if (host !== 'FreeCode for VS Code') throw new Error(`the view's ui/initialize answer named host ${JSON.stringify(host)}`);
				// Its size-changed reached the page: the frame is as tall as the view's content, not the 320 px it starts at.
				const want = await frame.evaluate(() => Math.ceil(document.body.getBoundingClientRect().height));
				const end = Date.now() + uiTimeoutMs;
				let got;
				while ((got = await frame.parentFrame().evaluate(() => document.getElementById('view').style.height)) !== `${want}px`) {
					if (Date.now() > end) throw new Error(`the view's frame is ${JSON.stringify(got)} tall; its content ${want}px`);
					await page.waitForTimeout(200);
				}
				log(`the view's frame fits its content: ${got}`);
			});
			await shot(page, 'apps-view');

			await step(page, "the view's frame has no VS Code API, no reach into the page, and no network", async () => {
				const seen = await frame.evaluate(async (url) => {
					let parentDocument;
					try {
						parentDocument = window.parent.document ? 'readable' : 'none';
					} catch (e) {
						parentDocument = `refused (${e.name})`;
					}
					let fetched;
					try {
						const r = await fetch(url);
						fetched = `got ${r.status}`;
					} catch (e) {
						fetched = `refused (${e.name})`;
					}
					return { api: typeof acquireVsCodeApi, origin: window.origin, parentDocument, fetched };
				}, probeUrl);
				log(`the view's frame: ${JSON.stringify(seen)}`);
				if (seen.api !== 'undefined') throw new Error('acquireVsCodeApi reaches the view');
				if (seen.origin !== 'null') throw new Error(`the view's origin is ${seen.origin}, not opaque`);
				if (!seen.parentDocument.startsWith('refused')) throw new Error(`the view reads its page: ${seen.parentDocument}`);
				if (!seen.fetched.startsWith('refused')) throw new Error(`the view fetched ${probeUrl}: ${seen.fetched}`);
				if (hits !== 0) throw new Error(`the loopback probe saw ${hits} request(s) from the view`);
			});

			const dialog = page.locator('.monaco-dialog-box');
			const del = () => frame.locator('#files li', { hasText: 'delete-me.txt' }).getByRole('button', { name: 'Delete' }).click();
			await step(page, "the view's Delete asks for the destructive delete_file first", async () => {
				await del();
				await dialog.getByText('Allow FreeCode to run mcp__demo__delete_file?').waitFor();
				await dialog.getByText('"path": "delete-me.txt"').waitFor();
				await dialog.getByText('Asked by: the MCP Apps view of demo (a page the server shows), not a model.').waitFor();
			});
			await shot(page, 'apps-permission-prompt');
			await step(page, 'Deny runs nothing, and the view says the call was denied', async () => {
				await dialog.getByRole('button', { name: 'Deny' }).click();
				await frame.locator('#status.error', { hasText: /denied/ }).waitFor();
				if (!fs.existsSync(victim)) throw new Error('the file is gone although the call was denied');
				await frame.locator('#files li span', { hasText: /^delete-me\.txt$/ }).waitFor();
			});
			await shot(page, 'apps-denied');
			await step(page, 'Allow Once deletes the file, and the view lists the rest', async () => {
				await del();
				await dialog.getByText('Allow FreeCode to run mcp__demo__delete_file?').waitFor();
				await dialog.getByRole('button', { name: 'Allow Once' }).click();
				await frame.locator('#status', { hasText: 'deleted delete-me.txt' }).waitFor();
				await frame.locator('#title', { hasText: 'Project files (2)' }).waitFor();
				if (fs.existsSync(victim)) throw new Error('the call was allowed but the file is still there');
				if (hits !== 0) throw new Error(`the loopback probe saw ${hits} request(s)`);
			});
			await shot(page, 'apps-allowed');
		});
	} finally {
		probe.close();
	}
}
