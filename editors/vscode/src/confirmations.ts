// The confirmations of the commands whose action has a consequence: trusting
// the project, accepting a tool's new definition, importing another client's
// servers, revoking a project server's approval, signing out, adopting
// another frontend's task. Each is the
// modal's words and its buttons; commands/util.ts `confirm` shows one.
// Pure: no `vscode` import.

import type { TaskInfo, ToolReview } from '../../../frontend/src/protocol.gen';
import { oneLine, printable, truncate } from '../../../frontend/src/text';

/** ConfirmButton is one button of a confirmation: whether picking it goes ahead. */
export interface ConfirmButton {
	title: string;
	confirm: boolean;
}

/**
 * Confirmation is what a modal shows.
 *
 * VS Code's modal makes the first button that is not a close affordance its
 * default, the one Enter picks, and takes a close affordance out of the row
 * to be what Escape and closing the dialog pick (with none, a Cancel of its
 * own that answers undefined). So buttons puts the one that does nothing
 * first and none is a close affordance: Enter, Escape and closing the dialog
 * all leave things as they are.
 */
export interface Confirmation {
	message: string;
	detail: string;
	buttons: readonly ConfirmButton[];
}

/** choice is the two buttons of a confirmation, the one that does nothing first. */
function choice(refuse: string, go: string): ConfirmButton[] {
	return [
		{ title: refuse, confirm: false },
		{ title: go, confirm: true },
	];
}

/** confirmed maps the button picked (undefined: Escape or the dialog closed) to whether to go ahead. */
export function confirmed(c: Confirmation, picked: string | undefined): boolean {
	return c.buttons.find((b) => b.title === picked)?.confirm ?? false;
}

export const DO_NOT_TRUST = 'Do Not Trust';
export const TRUST = 'Trust Project';

/** trustConfirmation asks before the project's allow rules apply (freecode/project/trust). */
export function trustConfirmation(): Confirmation {
	return {
		message: 'Trust this project?',
		detail:
			"Until you trust it, only the deny and ask rules of this project's .freecode/settings.json and " +
			'settings.local.json apply. Once trusted, their allow rules apply too, so a tool they allow runs ' +
			'without asking you. "Always allow in this project" is offered only in a trusted project. ' +
			'Trusting accepts the rules as they are now: a later change by anyone but FreeCode that loosens them ' +
			'waits for your review.',
		buttons: choice(DO_NOT_TRUST, TRUST),
	};
}

export const DO_NOT_ACCEPT = 'Do Not Accept';
export const ACCEPT = 'Accept Definition';

/** The most of a change the confirmation shows; Show Definition Diff has all of it. */
const maxDiffChars = 1200;

/** acceptConfirmation asks before a tool's listed definition replaces the one the user accepted. */
export function acceptConfirmation(r: ToolReview): Confirmation {
	return {
		message: `Accept the new definition of ${printable(r.id)}?`,
		detail:
			`${truncate(printable(r.diff.trimEnd()), maxDiffChars)}\n\n` +
			'Models will be shown it, its annotations take effect, and calls no longer ask because of it.',
		buttons: choice(DO_NOT_ACCEPT, ACCEPT),
	};
}

export const DO_NOT_IMPORT = 'Do Not Import';
export const IMPORT = 'Import';
/** IMPORT_TO_KEYCHAIN imports with `--move-secrets`: credentials written out go to the keychain. */
export const IMPORT_TO_KEYCHAIN = 'Import, Credentials to Keychain';

/** The dry run's line when the file holds credentials written out (cmd/freecode/import_literal.go). */
const writtenOut = /^\d+ values? looks? like (a )?credentials? written out in the file: /;
/** The CLI's advice for a terminal, which the dialog's third button replaces. */
const moveAdvice = /^Without --move-secrets they are copied as written; /;

/** The most of the dry run's report the confirmation shows. */
const maxPreviewChars = 4000;

/**
 * importConfirmation asks before `freecode mcp import` writes what its dry
 * run (preview) reported; dropped are servers that run now and that the
 * import would stop (droppedServers), said first.
 */
export function importConfirmation(client: string, preview: string, dropped: readonly string[] = []): Confirmation {
	// The CLI's preview ends in its own words for a terminal ("Dry run: 2
	// servers would be added; nothing was written."); the dialog's question
	// says that already, and its count is put as a dialog would.
	const lines = preview.split('\n').flatMap((l) => {
		if (moveAdvice.test(l.trim())) {
			return [`${IMPORT} copies them as they are; ${IMPORT_TO_KEYCHAIN} keeps them in the OS keychain, the config holding \${secret:NAME} in their place.`];
		}
		const dry = /^Dry run: (\d+) (servers?) would be added; nothing was written\.$/.exec(l.trim());
		if (!dry) return [l];
		return [`${dry[1]} ${dry[2]} to add. Nothing is written until you choose ${IMPORT}.`];
	});
	if (dropped.length > 0) {
		const names = dropped.map((n) => oneLine(n, 60)).join(', ');
		lines.unshift(
			`Running now but no longer in the file, which the paste replaced: ${names}. Importing keeps the file as it is, and ${dropped.length === 1 ? 'it stops' : 'they stop'}; to keep ${dropped.length === 1 ? 'it' : 'them'}, undo the paste first.`,
			'',
		);
	}
	return {
		message: `Import MCP servers from ${client}?`,
		detail: truncate(printable(lines.join('\n')), maxPreviewChars),
		buttons: preview.split('\n').some((l) => writtenOut.test(l.trim()))
			? [...choice(DO_NOT_IMPORT, IMPORT), { title: IMPORT_TO_KEYCHAIN, confirm: true }]
			: choice(DO_NOT_IMPORT, IMPORT),
	};
}

export const KEEP_APPROVAL = 'Keep Approval';
export const REVOKE = 'Revoke Approval';

/** revokeConfirmation asks before a project server's approval is withdrawn, which stops it. */
export function revokeConfirmation(server: string): Confirmation {
	const name = oneLine(server, 80);
	return {
		message: `Revoke your approval of "${name}"?`,
		detail: `FreeCode stops ${name}, and it does not run again until you approve this project's entry again.`,
		buttons: choice(KEEP_APPROVAL, REVOKE),
	};
}

export const STAY_SIGNED_IN = 'Stay Signed In';
export const SIGN_OUT = 'Sign Out';

/** signOutConfirmation asks before a remote server is stopped and its sign-in forgotten (freecode/servers/logout). */
export function signOutConfirmation(server: string): Confirmation {
	const name = oneLine(server, 80);
	return {
		message: `Sign out of "${name}"?`,
		detail: `FreeCode stops ${name} and deletes its saved sign-in: its next start needs you to sign in again.`,
		buttons: choice(STAY_SIGNED_IN, SIGN_OUT),
	};
}

export const KEEP = 'Keep';
export const REMOVE = 'Remove';

/** removeConfirmation asks before a server's entry leaves the config (freecode mcp remove). */
export function removeConfirmation(name: string, configPath: string): Confirmation {
	return {
		message: `Remove ${oneLine(name, 80)} from your config?`,
		detail:
			`Its entry leaves ${printable(configPath)}, and the server stops. ` +
			'Its tools go with it; add it again with Add MCP Server, or Disable it instead to keep the entry.',
		buttons: choice(KEEP, REMOVE),
	};
}

export const LEAVE_TASK = 'Leave It';
export const ADOPT_TASK = 'Adopt Task';

/** adoptConfirmation asks before another frontend's task becomes ours (freecode/tasks/adopt). */
export function adoptConfirmation(t: TaskInfo): Confirmation {
	return {
		message: `Adopt the task ${oneLine(t.tool, 60)} on ${oneLine(t.server, 40)}?`,
		detail:
			`Task ${oneLine(t.taskId, 80)} was started by another frontend (a CLI, a browser tab, another window), or is nobody's ` +
			'since its frontend left or the sidecar restarted. Adopting it makes it yours: its status, its result and the ' +
			'questions it asks from now on come here, and you may cancel it. The frontend that has it now, if it is still ' +
			'connected, no longer sees them.',
		buttons: choice(LEAVE_TASK, ADOPT_TASK),
	};
}
