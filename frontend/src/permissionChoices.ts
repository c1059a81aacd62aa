// The permission prompt's words and buttons, and the answer each button
// sends back for freecode/permission/request. The extension's
// permissionPrompt.ts shows them in a modal, the page in a dialog; this
// module decides them. Pure: no `vscode` import.

import type { PermissionRequest, PermissionResponse } from './protocol.gen';
import { oneLine, printable, truncate } from './text';
import { whyAsked } from './wording';

/**
 * Choice is one button: an answer for the sidecar, or the request to see the
 * whole arguments first.
 *
 * VS Code's modal (window.showWarningMessage with modal: true) makes the
 * first item that is not a close affordance its default button, the one
 * Enter picks, and the close affordance (or, when there is none, a Cancel of
 * its own that answers undefined) what Escape and closing the dialog pick.
 * A close affordance is taken out of the row to become that Cancel, so Deny
 * cannot be both: Deny comes first, and no choice is a close affordance.
 * Enter, Escape and closing the dialog all deny. VS Code's Cancel cannot be
 * taken out of a modal, so the prompt says what it does (CANCEL_DENIES).
 */
export interface Choice {
	title: string;
	/** The answer; absent for "Show Full Arguments", which answers nothing. */
	answer?: PermissionResponse;
	/** Never set here: see above. */
	isCloseAffordance?: boolean;
	/** Trust the project (freecode/project/trust) before answering: its allow rules apply only then. */
	trustFirst?: boolean;
}

/** Prompt is what the modal shows. */
export interface Prompt {
	message: string;
	detail: string;
	choices: Choice[];
	/** The arguments, whole and pretty, when detail shows only their start. */
	fullArguments?: string;
}

export const ALLOW_ONCE = 'Allow Once';
export const ALLOW_PROJECT = 'Always Allow in This Project';
export const TRUST_AND_ALLOW_PROJECT = 'Trust Project and Always Allow Here';
export const ALLOW_EVERYWHERE = 'Always Allow Everywhere';
export const SHOW_FULL = 'Show Full Arguments';
export const ACCEPT_CHANGE = 'Accept Change and Allow Once';
export const ACCEPT_NEW = 'Accept Tool and Allow Once';
export const DENY = 'Deny';
/** CANCEL_DENIES is the prompt's line on VS Code's own Cancel button, which the modal always has beside the choices. */
export const CANCEL_DENIES = 'Cancel and Escape deny, as Deny does: the tool does not run.';

/** DENIED is the answer to anything but an explicit allow: Deny, Enter, Escape, closing the dialog, an error. */
export const DENIED: PermissionResponse = { decision: 'deny' };

/** prettyArguments is the arguments as indented JSON. */
export function prettyArguments(args: unknown): string {
	if (args === undefined) return '{}';
	try {
		return JSON.stringify(args, null, 2) ?? String(args);
	} catch {
		return String(args);
	}
}

/** The most of a definition's change the prompt shows; the rest is a command away. */
const maxReviewChars = 1500;

/**
 * permissionPrompt builds the modal for one request. destructive is the
 * tool's own hint (ToolInfo.destructive), which the request does not carry;
 * undefined when the tool is not known. Arguments longer than
 * maxArgumentChars are cut, and a Show Full Arguments button appears. A
 * request for a tool whose definition changed since the user accepted it
 * (or that is new) shows the change, and offers to accept it with the call.
 * "Always Allow in This Project" stands beside "everywhere" whenever there is
 * a project: as it is when the sidecar says the project is trusted, and as
 * "Trust Project and Always Allow Here" when not, since an untrusted
 * project's allow rules are ignored and the button would otherwise promise
 * something that does not happen. For the same reason no "always" choice
 * is offered when the sidecar says one could take no effect
 * (req.noAlwaysAllow: the organization's managed settings decide), and
 * the detail says why, in the sidecar's words, as the CLI does.
 */
export function permissionPrompt(
	req: PermissionRequest,
	maxArgumentChars: number,
	destructive?: boolean,
	hasProject = req.projectTrusted,
): Prompt {
	const pretty = printable(prettyArguments(req.arguments));
	const cut = pretty.length > maxArgumentChars;
	const shown = cut ? pretty.slice(0, maxArgumentChars) : pretty;
	const tool = oneLine(req.tool, 120);
	const lines = [
		req.server !== undefined ? `Server: ${oneLine(req.server, 80)}` : 'Built-in tool',
		...(req.app ? [`Asked by: the MCP Apps view of ${oneLine(req.app.server, 80)} (a page the server shows), not a model.`] : []),
		req.readOnly
			? 'This tool only reads (read-only).'
			: destructive
				? 'This tool can change things, maybe for good (destructive, as its server describes it).'
				: 'This tool can change things (not read-only).',
		`Why you are asked: ${oneLine(whyAsked(req.reason), 400)}`,
		...(req.noAlwaysAllow ? [`Always allow it: not offered, ${sentence(oneLine(req.noAlwaysAllow, 400))}`] : []),
		CANCEL_DENIES,
		'',
		'Arguments:',
		shown,
	];
	if (cut) {
		lines.push(`… ${pretty.length - maxArgumentChars} more characters: choose "${SHOW_FULL}" to read them all.`);
	}
	const rv = req.review;
	if (rv) {
		lines.push(
			'',
			rv.kind === 'new'
				? 'This tool is new on the server, since you accepted its tools:'
				: "This tool's definition changed since you accepted it ([-removed-] {+added+}):",
			truncate(printable(rv.diff.trimEnd()), maxReviewChars),
		);
	}
	// Deny first: the default button, which Enter picks.
	const choices: Choice[] = [
		{ title: DENY, answer: DENIED },
		{ title: ALLOW_ONCE, answer: { decision: 'allowOnce' } },
	];
	if (rv) {
		choices.push({ title: rv.kind === 'new' ? ACCEPT_NEW : ACCEPT_CHANGE, answer: { decision: 'allowOnce', acceptDefinition: true } });
	}
	if (!req.noAlwaysAllow) {
		if (req.projectTrusted) {
			choices.push({ title: ALLOW_PROJECT, answer: { decision: 'allowAlways', scope: 'local' } });
		} else if (hasProject) {
			choices.push({ title: TRUST_AND_ALLOW_PROJECT, answer: { decision: 'allowAlways', scope: 'local' }, trustFirst: true });
		}
		choices.push({ title: ALLOW_EVERYWHERE, answer: { decision: 'allowAlways', scope: 'user' } });
	}
	if (cut) choices.push({ title: SHOW_FULL });
	return {
		message: `Allow FreeCode to run ${tool}?`,
		detail: lines.join('\n'),
		choices,
		fullArguments: cut ? pretty : undefined,
	};
}

/** sentence ends s with a full stop, unless it ends with one already. */
function sentence(s: string): string {
	return /[.!?…]$/.test(s) ? s : `${s}.`;
}

/** answerFor maps the button picked (undefined: Escape or the dialog closed) to the reply. */
export function answerFor(prompt: Prompt, picked: string | undefined): PermissionResponse | 'showFull' {
	const c = prompt.choices.find((x) => x.title === picked);
	if (!c) return DENIED;
	return c.answer ?? 'showFull';
}

/** trustsFirst says whether the button picked trusts the project before its answer goes. */
export function trustsFirst(prompt: Prompt, picked: string | undefined): boolean {
	return prompt.choices.find((x) => x.title === picked)?.trustFirst === true;
}
