// The modal for freecode/permission/request. permissionChoices.ts decides the
// words and the answer of each button; Enter (the default button, Deny),
// Escape, closing the dialog and the sidecar giving up on the call all answer
// deny.

import * as os from 'node:os';
import * as vscode from 'vscode';
import { allowNotice, type AllowStep } from './allowNotice';
import { ALWAYS_ALLOW, modalRow } from './alwaysAllow';
import { answerFor, DENIED, permissionPrompt, trustsFirst } from '../../../frontend/src/permissionChoices';
import type { PermissionRequest, PermissionResponse } from '../../../frontend/src/protocol.gen';
import type { ReadOnlyDocs } from './readOnlyDocs';
import type { CancellationToken, Session } from '../../../frontend/src/session';

/** askPermission shows the prompt until the user answers (Show Full Arguments opens them and asks again). */
export async function askPermission(
	req: PermissionRequest,
	argumentChars: number,
	token: CancellationToken,
	docs: ReadOnlyDocs,
	destructive?: boolean,
	project?: { exists: boolean; trust(): Promise<void> },
): Promise<PermissionResponse> {
	const prompt = permissionPrompt(req, argumentChars, destructive, req.projectTrusted || project?.exists === true);
	const cancelled = new Promise<undefined>((resolve) => {
		if (token.isCancellationRequested) resolve(undefined);
		token.onCancellationRequested(() => resolve(undefined));
	});
	const { row, always } = modalRow(prompt);
	for (;;) {
		const items: vscode.MessageItem[] = row.map((c) => ({
			title: c.title,
			isCloseAffordance: c.isCloseAffordance,
		}));
		// A modal cannot be closed from here: if the sidecar stops waiting,
		// the answer is deny at once and the click that follows is ignored.
		const clicked = await Promise.race([
			vscode.window.showWarningMessage(prompt.message, { modal: true, detail: prompt.detail }, ...items),
			cancelled,
		]);
		if (token.isCancellationRequested) return DENIED;
		let picked: { title: string } | undefined = clicked;
		if (clicked?.title === ALWAYS_ALLOW) {
			const where = await Promise.race([
				vscode.window.showQuickPick(always, { title: `Always allow ${req.tool}`, placeHolder: 'Where FreeCode runs it without asking; Escape goes back', ignoreFocusOut: true }),
				cancelled,
			]);
			if (token.isCancellationRequested) return DENIED;
			if (!where) continue; // back to the question
			picked = { title: where.label };
		}
		const answer = answerFor(prompt, picked?.title);
		if (answer !== 'showFull' && trustsFirst(prompt, picked?.title) && project) {
			try {
				await project.trust();
			} catch (e) {
				// The rule is still written; it applies once the project is trusted.
				void vscode.window.showWarningMessage(`Trusting the project failed: ${(e as Error).message}`);
			}
		}
		if (answer !== 'showFull') return answer;
		await docs.show(`arguments/${req.callId}.json`, prompt.fullArguments ?? '', { preview: true });
	}
}

/**
 * tellAllowed says what an "always allow" answer wrote (allowNotice.ts),
 * with Undo, once the answer went: the notice does not hold the call.
 * open opens the rule file.
 */
export async function tellAllowed(s: Session, step: AllowStep, open: (path: string) => void): Promise<void> {
	const p = await s.project().catch(() => undefined);
	await allowNotice(step, { root: p?.root, settingsPaths: p?.settingsPaths, home: os.homedir() }, {
		showInfo: (message, ...buttons) => vscode.window.showInformationMessage(message, ...buttons),
		showError: (message) => void vscode.window.showErrorMessage(message),
		openFile: open,
		removeAllow: (rule, scope) => s.removeAllow(rule, scope),
		untrust: async () => {
			const r = await s.trust(false);
			await vscode.commands.executeCommand('setContext', 'freecode.projectTrusted', r.projectTrusted);
		},
	});
}
