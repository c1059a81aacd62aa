import * as vscode from 'vscode';
import type { FreeCode } from '../context';
import { missingSecrets, secretsSetWords, secretValueProblem, setSecrets } from '../../../../frontend/src/secrets';
import { oneLine, printable } from '../../../../frontend/src/text';
import { serverName, session, showError, type CommandFactory } from './util';

/**
 * setSecret asks for the value of each secret a server failed for the want
 * of (a ${secret:NAME} of its entry that is not set), in a password input,
 * and sends each with freecode/secrets/set: the sidecar keeps it in the OS
 * keychain (else a file only the user can read) and starts the servers that
 * missed it. The value goes in that request only: the trace channel shows
 * *** for it (secretTrace.ts). What came of it is said in the status bar; a
 * server that failed again, in a notification.
 */
export const setSecret: CommandFactory = (fc) => (node?: unknown) => setSecretOf(fc, node);

async function setSecretOf(fc: FreeCode, node: unknown): Promise<void> {
	const s = session(fc);
	if (!s) return;
	const name = await serverName(fc, node, 'setSecret');
	if (!name) return;
	const st = fc.model.server(name);
	const missing = st ? missingSecrets(st) : [];
	if (missing.length === 0) {
		void vscode.window.showInformationMessage(`${name} is not waiting for a secret any more.`);
		return;
	}
	const sender = {
		setSecret: async (secret: string, value: string) =>
			await vscode.window.withProgress({ location: { viewId: 'freecode.servers' }, title: `Setting the secret ${secret} of ${name}` }, () => s.setSecret(secret, value)),
	};
	try {
		const r = await setSecrets(sender, name, missing, (secret, prompt) =>
			Promise.resolve(
				vscode.window.showInputBox({
					title: `Set Secret ${printable(secret)}`,
					prompt,
					password: true,
					ignoreFocusOut: true,
					validateInput: secretValueProblem,
				}),
			),
		);
		if (!r) return;
		vscode.window.setStatusBarMessage(`$(check) ${secretsSetWords(r)}`, 8000);
		// Their statuses came before the answer: one that failed again says why.
		for (const started of r.started) {
			const now = fc.model.server(started);
			if (now?.state !== 'failed') continue;
			if (missingSecrets(now).length > 0) {
				void vscode.window.showWarningMessage(`${started} failed: ${oneLine(now.lastError ?? 'a secret is not set', 300)}`, 'Set Secret…').then((pick) => {
					if (pick) void setSecretOf(fc, { kind: 'server', name: started });
				});
			} else {
				void vscode.window.showErrorMessage(`${started} failed: ${oneLine(now.lastError ?? 'no reason given', 300)}`, 'Show Log').then((pick) => {
					if (pick) fc.logs.show(started, now);
				});
			}
		}
	} catch (e) {
		showError(`Setting the secrets of ${name}`, e);
	}
}
