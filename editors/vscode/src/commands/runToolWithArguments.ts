import * as vscode from 'vscode';
import type { FreeCode } from '../context';
import type { ToolCall } from '../../../../frontend/src/protocol.gen';
import { resultDocument, resultSummary } from '../../../../frontend/src/resultText';
import { parseArgumentsDocument } from '../../../../frontend/src/schemaPrefill';
import { RESULT_DOC } from '../toolRuns';
import { SCHEME } from '../readOnlyDocs';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/** How long the status bar says that a run went well. */
const ranShownMs = 15_000;
let lastRan: vscode.Disposable | undefined;

/**
 * runToolWithArguments runs the tool of the arguments document in the active
 * editor through the orchestrator (freecode/tools/execute: validation,
 * permission rules, the prompt), and shows the result.
 */
export const runToolWithArguments: CommandFactory = (fc) => async () => {
	const editor = vscode.window.activeTextEditor;
	const tool = editor && fc.toolRuns.toolOf(editor.document);
	if (!editor || !tool) {
		void vscode.window.showErrorMessage('Open the arguments of a tool first (FreeCode: Run Tool…).');
		return;
	}
	const parsed = parseArgumentsDocument(editor.document.getText());
	if (parsed.error !== undefined) {
		void vscode.window.showErrorMessage(parsed.error);
		return;
	}
	await runAndShow(fc, tool, parsed.value);
};

/** runAndShow runs one call and shows its result in the result document, reused from run to run. */
export async function runAndShow(fc: FreeCode, tool: string, args: unknown): Promise<void> {
	const s = session(fc);
	if (!s) return;
	const call: ToolCall = { callId: fc.toolRuns.callId(), tool, arguments: args };
	try {
		const res = await vscode.window.withProgress(
			{ location: vscode.ProgressLocation.Notification, title: `Running ${tool}`, cancellable: true },
			async (progress, token) => {
				let last = 0;
				const tracking = fc.toolRuns.track(call.callId, (p) => {
					const pct = p.total ? (100 * p.progress) / p.total : undefined;
					progress.report({ message: p.message, increment: pct !== undefined ? pct - last : undefined });
					if (pct !== undefined) last = pct;
				});
				try {
					return await s.execute([call], token);
				} finally {
					tracking.dispose();
				}
			},
		);
		const r = res.results.find((x) => x.callId === call.callId) ?? res.results[0];
		if (!r) {
			void vscode.window.showErrorMessage(`${tool}: the sidecar returned no result.`);
			return;
		}
		// A call its server runs as a task shows in the Tasks group at once.
		if (r.task) fc.model.updateTask(r.task);
		const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${RESULT_DOC}` });
		const column = fc.toolRuns.resultColumn(uri);
		await fc.docs.show(RESULT_DOC, resultDocument(tool, r), { preview: true, preserveFocus: true, viewColumn: column });
		// A task's end replaces "running as task …" there.
		fc.taskDoc.follow(RESULT_DOC, r.task);
		fc.toolRuns.showImages(tool, r, vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri.toString())?.viewColumn ?? column);
		// A result the server made is shown in the tool's MCP Apps view too, if it names one.
		const info = fc.model.tool(tool);
		if (info?.ui?.resourceUri && (r.decision === 'allowed' || r.decision === 'asked')) void fc.apps.show(info, args, r, vscode.ViewColumn.Beside);
		const summary = resultSummary(tool, r);
		// A call the user denied went as they asked: no error for it. One
		// that ran is in its result document already: a toast per run only
		// stacked up, so the status bar says it, the last run's only.
		if (r.isError && r.decision !== 'denied') void vscode.window.showErrorMessage(summary);
		else if (r.decision === 'denied' || r.decision === 'invalid') void vscode.window.showInformationMessage(summary);
		else {
			lastRan?.dispose();
			lastRan = vscode.window.setStatusBarMessage(`$(check) ${summary}`, ranShownMs);
		}
	} catch (e) {
		showError(`Running ${tool}`, e);
	}
}
