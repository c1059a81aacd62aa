// What the user is shown when a trusted project's rule files loosen the rules
// they accepted (freecode/rules/reviewNeeded): the notice, the diff to read
// and the modal that accepts it by its hash. rulesNotices.ts shows them.
// Pure: no `vscode` import.

import type { RuleFileChange, RulesReview } from '../../../frontend/src/protocol.gen';
import { printable } from '../../../frontend/src/text';

export const REVIEW = 'Review';
export const KEEP = 'Keep the Old Rules';
export const ACCEPT_RULES = 'Accept the New Rules';

function count(n: number, what: string): string {
	return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/** what sums the changes up: "2 allow rules added, 1 deny rule removed". */
function what(files: readonly RuleFileChange[]): string {
	let allow = 0;
	let deny = 0;
	let ask = 0;
	for (const f of files) {
		allow += f.allow?.length ?? 0;
		deny += f.deny?.length ?? 0;
		ask += f.ask?.length ?? 0;
	}
	const parts: string[] = [];
	if (allow) parts.push(`${count(allow, 'allow rule')} added`);
	if (deny) parts.push(`${count(deny, 'deny rule')} removed`);
	if (ask) parts.push(`${count(ask, 'ask rule')} removed`);
	return parts.join(', ');
}

/** What holds until the user accepts, and why: said the same in the notice, the diff and the modal. */
const meanwhile =
	'Until you accept, the new allow rules are ignored and the removed deny and ask rules are still enforced: ' +
	'a pull, an editor or a server of the project can write these files, and only you loosen your rules.';

/**
 * rulesNotice is the one line that tells the user, with a Review button, or
 * undefined when nothing awaits (no files, or no hash to accept by).
 */
export function rulesNotice(r: RulesReview): string | undefined {
	if (!r.hash || r.files.length === 0) return undefined;
	return `This project's permission rules changed since you accepted them (${what(r.files)}): the change waits for your review.`;
}

/** rulesDocument is the change as a diff to read: per file, + for an allow rule added, - for a deny or ask rule removed. */
export function rulesDocument(r: RulesReview): string {
	const out = ["# This project's permission rules, changed since you accepted them.", `# ${meanwhile}`, ''];
	for (const f of r.files) {
		out.push(`--- ${printable(f.path)} (as you accepted it)`, `+++ ${printable(f.path)} (now)`);
		for (const p of f.allow ?? []) out.push(`+ allow ${printable(p)}`);
		for (const p of f.deny ?? []) out.push(`- deny  ${printable(p)}`);
		for (const p of f.ask ?? []) out.push(`- ask   ${printable(p)}`);
		out.push('');
	}
	return out.join('\n');
}

/** RulesChoice is one button of the modal: whether picking it accepts. */
export interface RulesChoice {
	title: string;
	accept: boolean;
}

/** RulesPrompt is what the modal shows after the diff, and the hash accepting sends. */
export interface RulesPrompt {
	message: string;
	detail: string;
	/** Keep first: it is what Enter picks; Escape and closing the dialog pick neither. */
	choices: RulesChoice[];
	hash: string;
}

/** The most rules the modal lists; the diff has every one. */
const maxListed = 20;

/** rulesPrompt builds the modal, or undefined when there is nothing to accept. */
export function rulesPrompt(r: RulesReview): RulesPrompt | undefined {
	if (!r.hash || r.files.length === 0) return undefined;
	const lines: string[] = [];
	for (const f of r.files) {
		const rules = [
			...(f.allow ?? []).map((p) => `  + allow ${printable(p)} (would apply)`),
			...(f.deny ?? []).map((p) => `  - deny ${printable(p)} (would no longer be enforced)`),
			...(f.ask ?? []).map((p) => `  - ask ${printable(p)} (would no longer ask)`),
		];
		lines.push(`${printable(f.path)}:`, ...rules);
	}
	const shown = lines.length > maxListed ? [...lines.slice(0, maxListed), `  … and ${lines.length - maxListed} more lines: see the diff`] : lines;
	return {
		message: `Accept the changed permission rules of this project (${what(r.files)})?`,
		detail: [...shown, '', meanwhile, 'Accept only what you or someone you trust wrote.'].join('\n'),
		choices: [
			{ title: KEEP, accept: false },
			{ title: ACCEPT_RULES, accept: true },
		],
		hash: r.hash,
	};
}

/** acceptedRulesHash maps the button picked (undefined: Escape or the dialog closed) to the hash to accept by, if any. */
export function acceptedRulesHash(prompt: RulesPrompt, picked: string | undefined): string | undefined {
	return prompt.choices.find((c) => c.title === picked)?.accept ? prompt.hash : undefined;
}
