// The Tool Arguments document lives on a small file system of the
// extension's own (scheme freecode-args), not in a file of its storage: a
// window reload restores the tab, and a file named by the old extension
// host's pid was gone by then ("the file was not found", Create File), and
// the tab's breadcrumbs showed that internal storage path. Here the tab
// reads back what it held (kept in the workspace's state), and its
// breadcrumbs read "Tool Arguments.jsonc". Writes are kept in memory and in
// that state; there is no directory, and nothing can be created, deleted or
// renamed.

import * as vscode from 'vscode';

export const ARGS_SCHEME = 'freecode-args';
export const ARGS_URI = vscode.Uri.from({ scheme: ARGS_SCHEME, path: '/Tool Arguments.jsonc' });

/** What the document says before Run Tool… has put a tool's arguments in it. */
export const ARGS_PLACEHOLDER = '// Run Tool… on a tool of the FreeCode view puts its arguments here.\n{}\n';

const stateKey = 'freecode.toolArguments';

/** Kept is what the document held last, and whose arguments they were. */
export interface Kept {
	tool?: string;
	text: string;
}

export class ArgumentsFs implements vscode.FileSystemProvider, vscode.Disposable {
	private kept: Kept;
	private mtime = Date.now();
	private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
	readonly onDidChangeFile = this.emitter.event;
	private readonly reg: vscode.Disposable;

	constructor(private readonly state: vscode.Memento) {
		this.kept = state.get<Kept>(stateKey) ?? { text: ARGS_PLACEHOLDER };
		this.reg = vscode.workspace.registerFileSystemProvider(ARGS_SCHEME, this, { isCaseSensitive: true });
	}

	/** tool is whose arguments the document holds, if Run Tool… put them there. */
	get tool(): string | undefined {
		return this.kept.tool;
	}

	/** put writes text as tool's arguments. */
	put(tool: string, text: string): void {
		this.kept = { tool, text };
		this.changed();
	}

	private changed(): void {
		this.mtime = Date.now();
		void this.state.update(stateKey, this.kept);
		this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri: ARGS_URI }]);
	}

	private check(uri: vscode.Uri): void {
		if (uri.path !== ARGS_URI.path) throw vscode.FileSystemError.FileNotFound(uri);
	}

	watch(): vscode.Disposable {
		return new vscode.Disposable(() => {});
	}

	stat(uri: vscode.Uri): vscode.FileStat {
		if (uri.path === '/') return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
		this.check(uri);
		return { type: vscode.FileType.File, ctime: 0, mtime: this.mtime, size: Buffer.byteLength(this.kept.text) };
	}

	readDirectory(): [string, vscode.FileType][] {
		return [[ARGS_URI.path.slice(1), vscode.FileType.File]];
	}

	readFile(uri: vscode.Uri): Uint8Array {
		this.check(uri);
		return Buffer.from(this.kept.text, 'utf8');
	}

	writeFile(uri: vscode.Uri, content: Uint8Array): void {
		this.check(uri);
		this.kept = { ...this.kept, text: Buffer.from(content).toString('utf8') };
		this.changed();
	}

	createDirectory(uri: vscode.Uri): void {
		throw vscode.FileSystemError.NoPermissions(uri);
	}

	delete(uri: vscode.Uri): void {
		throw vscode.FileSystemError.NoPermissions(uri);
	}

	rename(uri: vscode.Uri): void {
		throw vscode.FileSystemError.NoPermissions(uri);
	}

	dispose(): void {
		this.reg.dispose();
		this.emitter.dispose();
	}
}
