// The commands on a tool whose definition awaits review (its node says
// "definition changed" or "new"): Show Definition Diff, Accept Definition and
// Reject Definition, through freecode/tools/review. Accepting or rejecting
// names the definition the user was shown (its hash): a server that changed
// the tool again since gets nothing accepted.

import * as vscode from 'vscode';
import { acceptConfirmation } from '../confirmations';
import type { FreeCode } from '../context';
import type { Node, ToolNode } from '../nodes';
import type { ToolReview } from '../../../../frontend/src/protocol.gen';
import { showReviewDiff } from '../reviewNotices';
import { printable } from '../../../../frontend/src/text';
import type { CommandFactory } from './util';
import { confirm, session, showError } from './util';

/** reviewOf asks the sidecar for the review of a tool node, or tells the user there is none. */
async function reviewOf(fc: FreeCode, node: unknown): Promise<{ t: ToolNode; r: ToolReview } | undefined> {
	const n = node as Node | undefined;
	if (!n || n.kind !== 'tool') {
		void vscode.window.showInformationMessage('Pick a tool marked "definition changed" or "new" in the MCP Servers view.');
		return undefined;
	}
	const s = session(fc);
	if (!s) return undefined;
	try {
		const rs = await s.review({ server: n.server, tool: n.name, action: 'diff' });
		if (rs.length === 0) {
			void vscode.window.showInformationMessage(`${printable(n.id)} has nothing to review: it is as you accepted it.`);
			return undefined;
		}
		return { t: n, r: rs[0] };
	} catch (e) {
		showError(`Reading the change of ${printable(n.id)}`, e);
		return undefined;
	}
}

/** decide accepts or rejects the definition r, as shown. */
async function decide(fc: FreeCode, r: ToolReview, action: 'accept' | 'reject'): Promise<void> {
	const s = session(fc);
	if (!s) return;
	try {
		await s.review({ server: r.server, tool: r.tool, action, hash: r.hash });
	} catch (e) {
		showError(`${action === 'accept' ? 'Accepting' : 'Rejecting'} the definition of ${printable(r.id)}`, e);
	}
}

/**
 * showToolDefinitionDiff opens a tool's accepted and listed definitions in
 * the diff editor, with Reject and Accept at hand: Reject first, the
 * primary button.
 */
export const showToolDefinitionDiff: CommandFactory = (fc) => async (node?: unknown) => {
	const got = await reviewOf(fc, node);
	if (!got) return;
	const { r } = got;
	await showReviewDiff(fc.docs, `${r.server}/${r.tool}`, [r]);
	const pick = await vscode.window.showInformationMessage(
		`Accept the new definition of ${printable(r.id)}?`,
		'Reject',
		'Accept',
	);
	if (pick === 'Accept') await decide(fc, r, 'accept');
	if (pick === 'Reject') await decide(fc, r, 'reject');
};

/** acceptToolDefinition accepts the definition a tool's server lists, after showing the change. */
export const acceptToolDefinition: CommandFactory = (fc) => async (node?: unknown) => {
	const got = await reviewOf(fc, node);
	if (!got) return;
	const { r } = got;
	if (await confirm(acceptConfirmation(r))) await decide(fc, r, 'accept');
};

/** rejectToolDefinition keeps the accepted definition and denies calls of the listed one. */
export const rejectToolDefinition: CommandFactory = (fc) => async (node?: unknown) => {
	const got = await reviewOf(fc, node);
	if (got) await decide(fc, got.r, 'reject');
};
