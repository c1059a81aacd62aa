// What several commands need: the live session, a server picked from a
// tree node or a quick pick, and errors shown the same way.

import * as vscode from 'vscode';
import { confirmed, type Confirmation } from '../confirmations';
import type { FreeCode } from '../context';
import type { Node } from '../nodes';
import type { Session } from '../../../../frontend/src/session';
import { actionWords, serverPicks, type ServerAction } from '../../../../frontend/src/serverActions';

/** session returns the live session, or tells the user why there is none. */
export function session(fc: FreeCode): Session | undefined {
	const s = fc.sidecar.session;
	if (s) return s;
	const why =
		fc.sidecar.state === 'missing'
			? "FreeCode's sidecar was not found, so there is nothing to ask."
			: fc.sidecar.state === 'starting'
				? "FreeCode's sidecar is still starting; try again in a moment."
				: "FreeCode's sidecar is not running.";
	void vscode.window.showErrorMessage(why, 'Show Log').then((pick) => {
		if (pick) fc.sidecar.output.show();
	});
	return undefined;
}

/**
 * serverName is the server of a tree node, or one the user picks among the
 * servers action applies to (from the palette, or the status bar's menu).
 */
export async function serverName(fc: FreeCode, node: unknown, action: ServerAction): Promise<string | undefined> {
	const n = node as Node | undefined;
	if (n && n.kind === 'server') return n.name;
	if (n && n.kind === 'tool') return n.server;
	const picks = serverPicks(fc.model.servers(), action);
	if (picks.length === 0) {
		void vscode.window.showInformationMessage(actionWords[action].none);
		return undefined;
	}
	const pick = await vscode.window.showQuickPick(picks, { placeHolder: actionWords[action].placeHolder });
	return pick?.name;
}

/** showError reports a failed command with what the sidecar or the CLI said. */
export function showError(what: string, e: unknown): void {
	const msg = e instanceof Error ? e.message : String(e);
	void vscode.window.showErrorMessage(`${what}: ${msg}`);
}

/**
 * confirm shows a confirmation in a modal and says whether the user went
 * ahead. The buttons go as they are, none a close affordance, so the first,
 * which does nothing, is what Enter picks.
 */
export async function confirm(c: Confirmation): Promise<boolean> {
	return (await confirmChoice(c)) !== undefined;
}

/** confirmChoice is confirm for a confirmation with more than one way ahead: the button picked, or undefined for none. */
export async function confirmChoice(c: Confirmation): Promise<string | undefined> {
	const picked = await vscode.window.showWarningMessage(
		c.message,
		{ modal: true, detail: c.detail },
		...c.buttons.map((b) => ({ title: b.title })),
	);
	return confirmed(c, picked?.title) ? picked?.title : undefined;
}

/** CommandFactory builds a command's callback from the shared parts (vscode-go's shape). */
export type CommandFactory = (fc: FreeCode) => (...args: any[]) => unknown;
