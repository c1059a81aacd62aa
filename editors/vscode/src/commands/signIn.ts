import * as vscode from 'vscode';
import type { FreeCode } from '../context';
import { signInOutcome } from '../signInOutcome';
import type { CommandFactory } from './util';
import { serverAction } from './serverAction';

/**
 * signIn starts a remote server's sign-in (freecode/servers/login); the
 * sidecar opens the browser through window/showDocument, and answers once
 * the sign-in is over. One that failed is told in a notification, with Try
 * Again.
 */
export const signIn: CommandFactory = (fc) => (node?: unknown) => signInTo(fc, node);

function signInTo(fc: FreeCode, node: unknown): Promise<void> {
	return serverAction(fc, node, 'signIn', 'Signing in to', async (s, name) => {
		const st = await s.login(name);
		void signInOutcome(st, {
			showError: (message, ...buttons) => vscode.window.showErrorMessage(message, ...buttons),
			retry: () => signInTo(fc, { kind: 'server', name }),
			showLog: () => fc.logs.show(name, fc.model.server(name) ?? st),
		});
		return st;
	});
}
