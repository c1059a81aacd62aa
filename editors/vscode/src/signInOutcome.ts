// What the user is told when a sign-in they started ends without one. The
// sidecar answers freecode/servers/login once the sign-in is over, with the
// server still needsAuth and why in lastError when it failed (the browser's
// page says so too, but the page may be in another window, or closed): the
// row's tooltip alone is too quiet for an answer the user waits on. Pure:
// no `vscode` import; the command gives it the notification to show.

import type { ServerStatus } from '../../../frontend/src/protocol.gen';
import { oneLine, printable } from '../../../frontend/src/text';

export const TRY_AGAIN = 'Try Again';
export const SHOW_LOG = 'Show Log';

/** SignInUI is what signInOutcome needs of the editor. */
export interface SignInUI {
	/** showError shows an error notification with buttons, and answers the one picked. */
	showError(message: string, ...buttons: string[]): PromiseLike<string | undefined>;
	/** retry starts the sign-in again. */
	retry(): Promise<void>;
	/** showLog shows the server's log. */
	showLog(): void;
}

/** signInFailure is the notification for a sign-in that ended as st says, or undefined when it signed in. */
export function signInFailure(st: ServerStatus): { message: string; buttons: string[] } | undefined {
	if (st.state !== 'needsAuth') return undefined;
	const why = st.lastError ? oneLine(st.lastError, 300) : 'no reason given';
	return { message: `Signing in to ${printable(st.name)} failed: ${why}`, buttons: [TRY_AGAIN, SHOW_LOG] };
}

/** signInOutcome tells the user of a failed sign-in, with Try Again; it resolves once the pick was acted on. */
export async function signInOutcome(st: ServerStatus, ui: SignInUI): Promise<void> {
	const n = signInFailure(st);
	if (!n) return;
	const pick = await ui.showError(n.message, ...n.buttons);
	if (pick === TRY_AGAIN) await ui.retry();
	else if (pick === SHOW_LOG) ui.showLog();
}
