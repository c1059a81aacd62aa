import * as vscode from 'vscode';
import { promptDoc } from '../../../../frontend/src/extrasText';
import type { Node } from '../nodes';
import type { PromptInfo } from '../../../../frontend/src/protocol.gen';
import { printable } from '../../../../frontend/src/text';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/**
 * getPrompt asks for a prompt's arguments, one input each (a required one
 * cannot be left empty), gets it (freecode/prompts/get) and opens its
 * messages read-only.
 */
export const getPrompt: CommandFactory = (fc) => async (node?: unknown) => {
	const s = session(fc);
	if (!s) return;
	const n = node as Node | undefined;
	let prompt: PromptInfo | undefined;
	try {
		const all = await s.prompts(n?.kind === 'prompt' ? n.server : undefined);
		if (n?.kind === 'prompt') {
			prompt = all.find((p) => p.name === n.name);
		} else if (all.length === 0) {
			void vscode.window.showInformationMessage('No connected MCP server offers a prompt.');
			return;
		} else {
			const pick = await vscode.window.showQuickPick(
				all.map((p) => ({
					label: printable(p.title ?? p.name),
					description: printable(p.server),
					detail: p.description ? printable(p.description) : undefined,
					prompt: p,
				})),
				{ placeHolder: 'Prompt to get', matchOnDescription: true, matchOnDetail: true },
			);
			prompt = pick?.prompt;
			if (!prompt) return;
		}
	} catch (e) {
		showError('Listing the prompts', e);
		return;
	}
	if (!prompt) {
		void vscode.window.showErrorMessage('That prompt is gone (its server changed its prompts).');
		return;
	}
	const args: Record<string, string> = {};
	const list = prompt.arguments ?? [];
	for (const [i, a] of list.entries()) {
		const v = await vscode.window.showInputBox({
			title: `${printable(prompt.title ?? prompt.name)} (${i + 1}/${list.length}): ${printable(a.title ?? a.name)}`,
			prompt: a.description ? printable(a.description) : undefined,
			placeHolder: a.required ? 'required' : 'optional: leave empty to leave it out',
			ignoreFocusOut: true,
			validateInput: (t) => (a.required && t === '' ? `${a.name} is required.` : undefined),
		});
		if (v === undefined) return;
		if (v !== '') args[a.name] = v;
	}
	const p = prompt;
	try {
		const r = await vscode.window.withProgress({ location: { viewId: 'freecode.servers' }, title: `Getting ${p.name}` }, () =>
			s.getPrompt(p.server, p.name, args),
		);
		const doc = promptDoc(p.server, p.name, r, args);
		await fc.docs.show(doc.name, doc.content);
	} catch (e) {
		showError(`Getting the prompt ${printable(p.name)} of ${printable(p.server)}`, e);
	}
};
