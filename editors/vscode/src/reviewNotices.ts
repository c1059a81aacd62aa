// Tells the user when a server lists tool definitions other than the ones
// they accepted (freecode/tools/reviewNeeded): once per definition, with the
// change a click away (Review Changes, the only button) in VS Code's diff
// editor, then Reject All or Accept All, Reject first: Accept All is never
// the primary button. The tree marks the tools meanwhile; calls of a changed
// tool ask anyway.

import * as vscode from 'vscode';
import { decideButtons, decideQuestion, noticeButtons, ACCEPT_ALL, REJECT_ALL, reviewSides } from './reviewDiff';
import type { ReviewNeeded, ToolReview } from '../../../frontend/src/protocol.gen';
import type { ReadOnlyDocs } from './readOnlyDocs';
import type { Session } from '../../../frontend/src/session';
import { printable } from '../../../frontend/src/text';

export class ReviewNotices {
	/** The definitions the user was told of, by hash: told once each. */
	private readonly told = new Set<string>();

	constructor(
		private readonly docs: ReadOnlyDocs,
		private readonly session: () => Session | undefined,
	) {}

	/** notify is the session's reviewNeeded hook. */
	notify(p: ReviewNeeded): void {
		const fresh = p.reviews.filter((r) => !r.rejected && !this.told.has(r.hash));
		for (const r of fresh) this.told.add(r.hash);
		if (fresh.length === 0) return;
		const changed = fresh.filter((r) => r.kind === 'changed').length;
		const what =
			changed > 0
				? `${changed} tool definition${changed === 1 ? '' : 's'} of ${printable(p.server)} changed since you accepted them`
				: `${fresh.length} new tool${fresh.length === 1 ? '' : 's'} on ${printable(p.server)}`;
		void vscode.window
			.showWarningMessage(`${what}: calls ask until you accept.`, ...noticeButtons)
			.then((pick) => (pick ? this.show(p.server, p.reviews) : undefined));
	}

	private async show(server: string, reviews: ToolReview[]): Promise<void> {
		await showReviewDiff(this.docs, server, reviews);
		const pick = await vscode.window.showInformationMessage(
			decideQuestion(server, reviews),
			...decideButtons,
		);
		const s = this.session();
		if (!pick || !s) return;
		const action = pick === ACCEPT_ALL ? 'accept' : pick === REJECT_ALL ? 'reject' : undefined;
		if (!action) return;
		for (const r of reviews) {
			try {
				await s.review({ server: r.server, tool: r.tool, action, hash: r.hash });
			} catch (e) {
				void vscode.window.showErrorMessage(`${printable(r.id)}: ${(e as Error).message}`);
			}
		}
	}
}

/**
 * showReviewDiff opens the accepted and the listed definitions of reviews
 * side by side, in VS Code's diff editor. The documents are of the
 * extension's language freecode-definition (.fcdef), which wraps long
 * lines (package.json's configurationDefaults): a side of a diff is half
 * an editor wide.
 */
export async function showReviewDiff(docs: ReadOnlyDocs, name: string, reviews: readonly ToolReview[]): Promise<void> {
	const sides = reviewSides(reviews);
	await docs.showDiff(
		`${printable(name)}: accepted ↔ listed now`,
		{ name: `reviews/${name}.accepted.fcdef`, content: sides.accepted },
		{ name: `reviews/${name}.listed.fcdef`, content: sides.listed },
	);
}
