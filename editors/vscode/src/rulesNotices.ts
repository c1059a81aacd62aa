// Tells the user when a trusted project's rule files loosen the rules they
// accepted (freecode/rules/reviewNeeded): once per change, with the diff a
// click away and Accept / Keep the Old Rules after reading it. Until
// accepted the sidecar ignores the new allow rules and still enforces the
// removed deny and ask rules.

import * as vscode from 'vscode';
import { CodeInvalidParams, type RulesReview } from '../../../frontend/src/protocol.gen';
import type { ReadOnlyDocs } from './readOnlyDocs';
import { acceptedRulesHash, REVIEW, rulesDocument, rulesNotice, rulesPrompt } from './rulesReview';
import type { Session } from '../../../frontend/src/session';

export class RulesNotices {
	/** The changes the user was told of, by hash: told once each. */
	private readonly told = new Set<string>();

	constructor(
		private readonly docs: ReadOnlyDocs,
		private readonly session: () => Session | undefined,
	) {}

	/** notify is the session's rulesReview hook. */
	notify(r: RulesReview): void {
		const line = rulesNotice(r);
		if (!line || !r.hash || this.told.has(r.hash)) return;
		this.told.add(r.hash);
		void vscode.window.showWarningMessage(line, REVIEW).then((pick) => (pick === REVIEW ? this.review(r) : undefined));
	}

	private async review(r: RulesReview): Promise<void> {
		const prompt = rulesPrompt(r);
		if (!prompt) return;
		await this.docs.show('rules/review.diff', rulesDocument(r));
		const picked = await vscode.window.showWarningMessage(
			prompt.message,
			{ modal: true, detail: prompt.detail },
			...prompt.choices.map((c) => ({ title: c.title })),
		);
		const hash = acceptedRulesHash(prompt, picked?.title);
		const s = this.session();
		if (!hash || !s) return;
		try {
			await s.acceptRules(hash);
		} catch (e) {
			const code = (e as { code?: number }).code;
			void vscode.window.showErrorMessage(
				code === CodeInvalidParams
					? 'The rule files changed again after you were shown them, so nothing was accepted; FreeCode shows the new change.'
					: `Accepting the project's rules: ${(e as Error).message}`,
			);
			// A change that came meanwhile is another hash, told anew.
		}
	}
}
