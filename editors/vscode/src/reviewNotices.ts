// Tells the user when a server lists tool definitions other than the ones
// they accepted (freecode/tools/reviewNeeded): once per definition, with the
// change a click away and Accept All / Reject All after reading it. The tree
// marks the tools meanwhile; calls of a changed tool ask anyway.

import * as vscode from 'vscode';
import { reviewDocument } from './reviewText';
import type { ReviewNeededParams, ToolReview } from './protocol';
import type { ReadOnlyDocs } from './readOnlyDocs';
import type { Session } from './session';
import { printable } from './text';

export class ReviewNotices {
	/** The definitions the user was told of, by hash: told once each. */
	private readonly told = new Set<string>();

	constructor(
		private readonly docs: ReadOnlyDocs,
		private readonly session: () => Session | undefined,
	) {}

	/** notify is the session's reviewNeeded hook. */
	notify(p: ReviewNeededParams): void {
		const fresh = p.reviews.filter((r) => !r.rejected && !this.told.has(r.hash));
		for (const r of fresh) this.told.add(r.hash);
		if (fresh.length === 0) return;
		const changed = fresh.filter((r) => r.kind === 'changed').length;
		const what =
			changed > 0
				? `${changed} tool definition${changed === 1 ? '' : 's'} of ${printable(p.server)} changed since you accepted them`
				: `${fresh.length} new tool${fresh.length === 1 ? '' : 's'} on ${printable(p.server)}`;
		void vscode.window
			.showWarningMessage(`${what}: calls ask until you accept.`, 'Show Diff')
			.then((pick) => (pick ? this.show(p.server, p.reviews) : undefined));
	}

	private async show(server: string, reviews: ToolReview[]): Promise<void> {
		await this.docs.show(`reviews/${server}.diff`, reviews.map(reviewDocument).join('\n\n'));
		const pick = await vscode.window.showInformationMessage(
			`Accept the new definitions of ${printable(server)}'s ${reviews.length} tool${reviews.length === 1 ? '' : 's'} shown?`,
			'Accept All',
			'Reject All',
		);
		const s = this.session();
		if (!pick || !s) return;
		const action = pick === 'Accept All' ? 'accept' : 'reject';
		for (const r of reviews) {
			try {
				await s.review({ server: r.server, tool: r.tool, action, hash: r.hash });
			} catch (e) {
				void vscode.window.showErrorMessage(`${printable(r.id)}: ${(e as Error).message}`);
			}
		}
	}
}
