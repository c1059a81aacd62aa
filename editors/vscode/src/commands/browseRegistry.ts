import * as vscode from 'vscode';
import { cliError, runCli } from '../cli';
import type { FreeCode } from '../context';
import {
	checkValue,
	entryItems,
	entryName,
	installArgs,
	installedWords,
	noneWords,
	parseAsked,
	parseEntries,
	searchDebounceMs,
	valuePrompt,
	type RegistryEntry,
	type RegistryItem,
} from '../registryBrowse';
import { checkServerName } from '../serverName';
import type { CommandFactory } from './util';
import { showError } from './util';

/**
 * browseRegistry searches the MCP Registry as the user types (`freecode mcp
 * search --json`, the registry the config or the organization's policy
 * names) and installs the pick with `freecode mcp install NAME@VERSION`:
 * the values it needs are asked in input boxes first (secret ones unseen)
 * and sent on the CLI's standard input, never its command line; the CLI
 * keeps the secrets in the secret store and writes ${secret:NAME} in the
 * entry. The sidecar sees the file change and the server appears in the
 * view; what was added is said in the status bar.
 */
export const browseRegistry: CommandFactory = (fc) => async () => {
	const entry = await pickEntry(fc);
	if (!entry) return;
	try {
		await install(fc, entry);
	} catch (e) {
		showError(`Installing ${entry.name}`, e);
	}
};

/** pickEntry shows the quick pick, searching as the user types, and returns the server picked. */
function pickEntry(fc: FreeCode): Promise<RegistryEntry | undefined> {
	const qp = vscode.window.createQuickPick<RegistryItem>();
	qp.title = 'Browse MCP Registry';
	qp.placeholder = 'Search the MCP Registry by name, title or description';
	qp.matchOnDescription = true;
	qp.matchOnDetail = true;
	let timer: ReturnType<typeof setTimeout> | undefined;
	// Only the latest search's answer is shown: an earlier one can end later.
	let seq = 0;
	const search = async (query: string) => {
		const mine = ++seq;
		qp.busy = true;
		try {
			const args = ['mcp', 'search', '--json'];
			if (query.trim() !== '') args.push(query.trim());
			const r = await runCli(fc.settings(), args);
			if (mine !== seq) return;
			if (r.code !== 0) {
				qp.items = [];
				qp.placeholder = `The search failed: ${cliError(r)}`;
				return;
			}
			const items = entryItems(parseEntries(r.stdout));
			qp.items = items;
			if (items.length === 0) qp.placeholder = noneWords(query);
		} catch (e) {
			if (mine === seq) qp.placeholder = `The search failed: ${e instanceof Error ? e.message : String(e)}`;
		} finally {
			if (mine === seq) qp.busy = false;
		}
	};
	return new Promise((resolve) => {
		let picked: RegistryEntry | undefined;
		qp.onDidChangeValue((v) => {
			if (timer) clearTimeout(timer);
			timer = setTimeout(() => void search(v), searchDebounceMs);
		});
		qp.onDidAccept(() => {
			picked = qp.selectedItems[0]?.entry;
			if (picked) qp.hide();
		});
		qp.onDidHide(() => {
			if (timer) clearTimeout(timer);
			seq++;
			qp.dispose();
			resolve(picked);
		});
		qp.show();
		void search('');
	});
}

/** install asks the name if the default is taken, then the values, then installs. */
async function install(fc: FreeCode, e: RegistryEntry): Promise<void> {
	const taken = fc.model.servers().map((s) => s.name);
	let name: string | undefined;
	if (taken.includes(entryName(e.name))) {
		name = await vscode.window.showInputBox({
			title: `Install ${e.name}`,
			prompt: `A server is named ${entryName(e.name)} already: the new one's name (letters, digits, "_" and "-")`,
			validateInput: (v) => checkServerName(v.trim(), taken),
		});
		if (name === undefined) return;
		name = name.trim();
	}
	const s = fc.settings();
	const listed = await vscode.window.withProgress(
		{ location: vscode.ProgressLocation.Window, title: `Reading ${e.name}@${e.version} from the registry` },
		() => runCli(s, installArgs(e, name, true)),
	);
	if (listed.code !== 0) {
		void vscode.window.showErrorMessage(`Installing ${e.name} failed: ${cliError(listed)}`);
		return;
	}
	const asked = parseAsked(listed.stdout);
	const values: Record<string, string> = {};
	for (const [i, v] of asked.entries()) {
		const p = valuePrompt(e.name, v, i, asked.length);
		const got = await vscode.window.showInputBox({ ...p, ignoreFocusOut: true, validateInput: (x) => checkValue(v, x) });
		if (got === undefined) return; // nothing was written
		values[v.name] = got;
	}
	const r = await vscode.window.withProgress(
		{ location: vscode.ProgressLocation.Window, title: `Installing ${e.name}@${e.version}` },
		() => runCli(s, installArgs(e, name, false), JSON.stringify(values)),
	);
	if (r.code !== 0) {
		void vscode.window.showErrorMessage(`Installing ${e.name} failed: ${cliError(r)}`);
		return;
	}
	// As Add MCP Server: the status bar, the new row shows it connect.
	vscode.window.setStatusBarMessage(`$(check) ${installedWords(r.stdout)}`, 8000);
}
