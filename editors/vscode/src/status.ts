// The status bar item: connected of enabled servers, in warning colours when
// one failed; a click focuses the MCP Servers view. statusText.ts decides
// the words.

import * as vscode from 'vscode';
import type { Sidecar } from './client';
import type { ServersModel } from './model';
import { statusText } from './statusText';

export class StatusItem implements vscode.Disposable {
	private readonly item = vscode.window.createStatusBarItem('freecode.status', vscode.StatusBarAlignment.Left, 50);
	private readonly subs: vscode.Disposable[] = [];

	constructor(
		private readonly model: ServersModel,
		private readonly sidecar: Sidecar,
	) {
		this.item.name = 'FreeCode MCP Servers';
		this.item.command = 'freecode.servers.focus';
		const off = model.onDidChange(() => this.update());
		this.subs.push({ dispose: off }, sidecar.onDidChangeState(() => this.update()));
		this.update();
		this.item.show();
	}

	private update(): void {
		const t = statusText(this.sidecar.state, this.model.summary());
		this.item.text = t.text;
		this.item.tooltip = t.tooltip;
		this.item.backgroundColor = t.background ? new vscode.ThemeColor(t.background) : undefined;
	}

	dispose(): void {
		this.subs.forEach((s) => s.dispose());
		this.item.dispose();
	}
}
