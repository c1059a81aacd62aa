// What Run Tool… keeps between its two steps: one arguments document per
// window, reused for every run (on the extension's own file system,
// argumentsFs.ts, saved as it is edited, so closing it never asks to save
// it, and a window reload restores it as it was), which tool it holds the
// arguments of, and where the progress of a running call goes. The result
// goes to one read-only document (ReadOnlyDocs), reused too: three runs
// leave one pair of editors, not six.

import * as vscode from 'vscode';
import { ARGS_URI, ArgumentsFs } from './argumentsFs';
import type { ToolProgress, ToolResult } from '../../../frontend/src/protocol.gen';
import { imagesPage, resultImages } from './resultImages';

/** The result's name under the freecode: scheme. */
export const RESULT_DOC = 'Tool Result.txt';

export class ToolRuns implements vscode.Disposable {
	private readonly args: ArgumentsFs;
	private readonly progress = new Map<string, (p: ToolProgress) => void>();
	private seq = 0;
	private readonly subs: vscode.Disposable[] = [];
	private images: vscode.WebviewPanel | undefined;
	/** The arguments document's file. */
	readonly argumentsUri: vscode.Uri;

	/** state is the workspace's: what the arguments document held outlives a window reload. */
	constructor(state: vscode.Memento) {
		this.args = new ArgumentsFs(state);
		this.argumentsUri = ARGS_URI;
		this.subs.push(
			this.args,
			vscode.window.onDidChangeActiveTextEditor((e) => this.updateContext(e)),
			vscode.workspace.onDidChangeTextDocument((e) => {
				// Saved as typed: the document never counts as unsaved.
				if (this.isArguments(e.document) && e.document.isDirty) void e.document.save();
			}),
		);
	}

	private isArguments(doc: vscode.TextDocument): boolean {
		return doc.uri.toString() === this.argumentsUri.toString();
	}

	private updateContext(e: vscode.TextEditor | undefined): void {
		const on = e !== undefined && this.isArguments(e.document) && this.args.tool !== undefined;
		void vscode.commands.executeCommand('setContext', 'freecode.toolArgumentsEditor', on);
	}

	/**
	 * openArguments puts text in the arguments document, for tool, and shows
	 * it where it already is, else in the first column.
	 */
	async openArguments(tool: string, text: string): Promise<void> {
		this.args.put(tool, text);
		const doc = await vscode.workspace.openTextDocument(this.argumentsUri);
		if (doc.getText() !== text) {
			// Open already: VS Code may not have read the file again yet.
			const edit = new vscode.WorkspaceEdit();
			edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
			await vscode.workspace.applyEdit(edit);
			await doc.save();
		}
		const shown = vscode.window.visibleTextEditors.find((e) => this.isArguments(e.document));
		await vscode.window.showTextDocument(doc, { preview: false, viewColumn: shown?.viewColumn ?? vscode.ViewColumn.One });
		this.updateContext(vscode.window.activeTextEditor);
	}

	/** toolOf is the tool whose arguments doc holds. */
	toolOf(doc: vscode.TextDocument): string | undefined {
		return this.isArguments(doc) ? this.args.tool : undefined;
	}

	/** resultColumn is where the result goes: where it is already, else beside the arguments. */
	resultColumn(resultUri: vscode.Uri): vscode.ViewColumn {
		const have = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === resultUri.toString());
		return have?.viewColumn ?? vscode.ViewColumn.Beside;
	}

	/**
	 * showImages shows a result's images as images, in one panel reused
	 * from run to run (a text document can only name them); a result
	 * without any leaves the panel as it is.
	 */
	showImages(tool: string, r: ToolResult, column: vscode.ViewColumn): void {
		const images = resultImages(r);
		if (images.length === 0) return;
		if (!this.images) {
			this.images = vscode.window.createWebviewPanel('freecode.resultImages', 'Tool Result Images', { viewColumn: column, preserveFocus: true }, {
				enableScripts: false,
				localResourceRoots: [],
			});
			this.images.onDidDispose(() => (this.images = undefined));
		} else {
			this.images.reveal(undefined, true);
		}
		this.images.webview.html = imagesPage(tool, images);
	}

	/** callId makes an id unique within this window's session. */
	callId(): string {
		return `vscode-${Date.now().toString(36)}-${++this.seq}`;
	}

	/** onProgress routes freecode/tools/progress to the call that asked for it. */
	onProgress(p: ToolProgress): void {
		this.progress.get(p.callId)?.(p);
	}

	/** track sends callId's progress to fn until the result disposes it. */
	track(callId: string, fn: (p: ToolProgress) => void): vscode.Disposable {
		this.progress.set(callId, fn);
		return { dispose: () => this.progress.delete(callId) };
	}

	dispose(): void {
		this.images?.dispose();
		this.subs.forEach((s) => s.dispose());
	}
}
