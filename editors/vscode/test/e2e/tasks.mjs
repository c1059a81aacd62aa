// The e2e scenario "tasks" (run.mjs runs it with its helpers): the demo
// server started with --tasks; long_build run from the view, allowed at
// the permission prompt before it starts, answers
// "running as task <id>" at once, the Tasks group shows it working with
// its step, then completed, and its result comes in a notification; a
// second, long one is cancelled from its row's Cancel Task.

import * as fs from 'node:fs';
import * as path from 'node:path';

export async function scenarioTasks(h) {
	const { args, inVSCode, step, shot, treeRow, rowAction, openServersView, replaceEditorText, notified } = h;
	if (!args.bin) throw new Error('the tasks scenario needs --bin (the directory with demo-server)');
	const demo = path.join(args.bin, 'demo-server');
	if (!fs.existsSync(demo)) throw new Error(`no ${demo}: run make build`);
	const prepare = (d) => {
		fs.mkdirSync(path.join(d.home, '.freecode'), { recursive: true, mode: 0o700 });
		const servers = [{ name: 'demo', type: 'local', command: [demo, '--root', d.workspace, '--tasks'] }];
		fs.writeFileSync(path.join(d.home, '.freecode', 'config.json'), `${JSON.stringify({ mcp: { servers } }, null, 2)}\n`, { mode: 0o600 });
		fs.writeFileSync(path.join(d.workspace, 'README.md'), '# e2e workspace\n');
	};
	const row = (page) => treeRow(page, 'long_build \\(demo\\)');
	const run = async (page, argsText) => {
		const tool = treeRow(page, 'long_build');
		await rowAction(page, tool, 'Run Tool');
		await page.locator('.view-lines', { hasText: 'Arguments for mcp__demo__long_build' }).waitFor();
		await replaceEditorText(page, argsText);
		await page.locator('.view-lines', { hasText: argsText }).waitFor();
		await page.locator('.editor-actions [aria-label^="Run Tool with These Arguments"]').first().click();
		// The rules are asked when the call is made, before the task starts.
		const dialog = page.locator('.monaco-dialog-box');
		await dialog.getByText('Allow FreeCode to run mcp__demo__long_build?').waitFor();
		await dialog.getByRole('button', { name: 'Allow Once' }).click();
	};
	await inVSCode('tasks', {}, prepare, async (page) => {
		await step(page, 'MCP Servers view opens', () => openServersView(page));
		await step(page, 'the demo server with --tasks is connected, long_build among its tools', async () => {
			await treeRow(page, 'demo').locator('.label-description', { hasText: /^connected · 8 tools$/ }).waitFor();
			await treeRow(page, 'long_build').waitFor();
		});
		await step(page, 'long_build answers "running as task" at once and shows in Tasks, working', async () => {
			await run(page, '{"steps": 3, "seconds": 9, "ask": false}');
			await page.locator('.view-lines', { hasText: 'running as task' }).first().waitFor();
			await treeRow(page, 'Tasks').waitFor();
			// Its step first: a side bar cuts the end of a row.
			await row(page).locator('.label-description', { hasText: /^step \d\/3 · < 1 min/ }).waitFor();
		});
		await shot(page, 'tasks-running');
		await step(page, 'it completes, its result comes in a notification and replaces "running as task" in its result document', async () => {
			await row(page).locator('.label-description', { hasText: /^completed · \d+ s/ }).waitFor();
			await notified(page, /Task long_build on demo completed: build passed/);
			// Its head line is cut by the editor's width: the result's own text is what shows.
			await page.locator('.view-lines', { hasText: 'long_build on demo, task' }).and(page.locator('.view-lines', { hasText: 'build passed' })).first().waitFor();
			if ((await page.locator('.view-lines', { hasText: 'running as task' }).count()) > 0) throw new Error('the result document still says "running as task"');
		});
		await shot(page, 'tasks-completed');
		await step(page, 'a long one is cancelled from its row', async () => {
			await run(page, '{"steps": 2, "seconds": 600, "ask": false}');
			const live = page.locator('.pane-body .monaco-list-row', { hasText: /step \d\/2 · / });
			await live.waitFor();
			await rowAction(page, live, 'Cancel Task');
			await page.locator('.pane-body .monaco-list-row .label-description', { hasText: /^cancelled · / }).first().waitFor();
			await notified(page, 'Task long_build on demo was cancelled');
		});
		await shot(page, 'tasks-cancelled');
	});
}
