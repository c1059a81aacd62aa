// What Run Tool… keeps between its two steps: which untitled documents hold
// arguments for which tool, and where the progress of a running call goes.

import * as vscode from 'vscode';
import type { ToolProgressParams } from './protocol';

export class ToolRuns implements vscode.Disposable {
	private readonly docs = new Map<string, string>();
	private readonly progress = new Map<string, (p: ToolProgressParams) => void>();
	private seq = 0;
	private readonly subs: vscode.Disposable[] = [];

	constructor() {
		this.subs.push(
			vscode.window.onDidChangeActiveTextEditor((e) => this.updateContext(e)),
			vscode.workspace.onDidCloseTextDocument((d) => this.docs.delete(d.uri.toString())),
		);
	}

	private updateContext(e: vscode.TextEditor | undefined): void {
		const on = e !== undefined && this.docs.has(e.document.uri.toString());
		void vscode.commands.executeCommand('setContext', 'freecode.toolArgumentsEditor', on);
	}

	/** remember marks doc as the arguments of tool. */
	remember(doc: vscode.TextDocument, tool: string): void {
		this.docs.set(doc.uri.toString(), tool);
		this.updateContext(vscode.window.activeTextEditor);
	}

	/** toolOf is the tool whose arguments doc holds. */
	toolOf(doc: vscode.TextDocument): string | undefined {
		return this.docs.get(doc.uri.toString());
	}

	/** callId makes an id unique within this window's session. */
	callId(): string {
		return `vscode-${Date.now().toString(36)}-${++this.seq}`;
	}

	/** onProgress routes freecode/tools/progress to the call that asked for it. */
	onProgress(p: ToolProgressParams): void {
		this.progress.get(p.callId)?.(p);
	}

	/** track sends callId's progress to fn until the result disposes it. */
	track(callId: string, fn: (p: ToolProgressParams) => void): vscode.Disposable {
		this.progress.set(callId, fn);
		return { dispose: () => this.progress.delete(callId) };
	}

	dispose(): void {
		this.subs.forEach((s) => s.dispose());
	}
}
