// The body shared by Start, Stop, Restart, Revoke Approval and Sign Out on a
// server node: the confirmation, when the action needs one, the request, a
// progress indicator while it runs, and the outcome.

import * as vscode from 'vscode';
import type { Confirmation } from '../confirmations';
import type { FreeCode } from '../context';
import type { ServerStatus } from '../../../../frontend/src/protocol.gen';
import type { ServerAction } from '../../../../frontend/src/serverActions';
import type { Session } from '../../../../frontend/src/session';
import { oneLine } from '../../../../frontend/src/text';
import { confirm, serverName, session, showError } from './util';

const stateDone = {
	connected: 'connected',
	connecting: 'connecting…',
	stopped: 'stopped',
	idle: 'ready, started on demand',
	disabled: 'disabled',
} as const;

/**
 * serverAction runs an action on the server of node, or on one the user
 * picks. With confirmation, the user is asked first, and nothing is sent
 * unless they go ahead.
 */
export async function serverAction(
	fc: FreeCode,
	node: unknown,
	action: ServerAction,
	verb: string,
	run: (s: Session, name: string) => Promise<ServerStatus>,
	confirmation?: (name: string) => Confirmation,
): Promise<void> {
	const s = session(fc);
	if (!s) return;
	const name = await serverName(fc, node, action);
	if (!name) return;
	if (confirmation && !(await confirm(confirmation(name)))) return;
	try {
		const st = await vscode.window.withProgress(
			{ location: { viewId: 'freecode.servers' }, title: `${verb} ${name}` },
			() => run(s, name),
		);
		if (st.state in stateDone) {
			// The row changes too, but a command from the palette or the
			// status bar's menu needs its answer where the user looks.
			vscode.window.setStatusBarMessage(`$(check) ${name}: ${stateDone[st.state as keyof typeof stateDone]}`, 5000);
		} else if (st.state === 'failed') {
			void vscode.window.showErrorMessage(`${name} failed: ${oneLine(st.lastError ?? 'no reason given', 300)}`, 'Show Log').then((pick) => {
				if (pick) fc.logs.show(name, st);
			});
		}
	} catch (e) {
		showError(`${verb} ${name}`, e);
	}
}
