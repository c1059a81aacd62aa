// Read-only documents under the freecode: scheme for what the extension shows
// but the user does not edit (a tool's result, the provider definitions, a
// call's full arguments): no "save changes?" when they close, and no way to
// mistake them for files. The file name's extension picks the language.

import * as vscode from 'vscode';

export const SCHEME = 'freecode';

export class ReadOnlyDocs implements vscode.TextDocumentContentProvider, vscode.Disposable {
	private readonly contents = new Map<string, string>();
	private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.emitter.event;
	private readonly subs: vscode.Disposable[];

	constructor() {
		this.subs = [
			vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
			vscode.workspace.onDidCloseTextDocument((d) => this.contents.delete(d.uri.toString())),
		];
	}

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.contents.get(uri.toString()) ?? '';
	}

	/**
	 * showDiff opens VS Code's diff editor on two read-only documents,
	 * freecode:/<left.name> and freecode:/<right.name>, under title.
	 */
	async showDiff(title: string, left: { name: string; content: string }, right: { name: string; content: string }): Promise<void> {
		const uris = [left, right].map((d) => {
			const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${d.name}` });
			this.contents.set(uri.toString(), d.content);
			this.emitter.fire(uri);
			return uri;
		});
		await vscode.commands.executeCommand('vscode.diff', uris[0], uris[1], title, { preview: false });
	}

	/** show opens content as freecode:/<name>, replacing what an earlier show of the same name put there. */
	async show(name: string, content: string, options?: vscode.TextDocumentShowOptions): Promise<void> {
		const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${name}` });
		this.contents.set(uri.toString(), content);
		this.emitter.fire(uri);
		const doc = await vscode.workspace.openTextDocument(uri);
		await vscode.window.showTextDocument(doc, { preview: false, ...options });
	}

	/** update replaces what freecode:/<name> shows, if it is open, without bringing it forward. */
	update(name: string, content: string): void {
		const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${name}` });
		if (!this.contents.has(uri.toString())) return;
		this.contents.set(uri.toString(), content);
		this.emitter.fire(uri);
	}

	dispose(): void {
		this.subs.forEach((s) => s.dispose());
		this.emitter.dispose();
	}
}
