// The status bar item: connected of enabled servers, in warning colours when
// one failed or the config has problems; a click opens a menu of what can
// be done now (statusMenu.ts). statusText.ts decides the words.

import * as vscode from 'vscode';
import type { Sidecar } from './client';
import type { ServersModel } from '../../../frontend/src/model';
import { statusMenu } from './statusMenu';
import { statusText } from '../../../frontend/src/statusText';

/** The command the item runs: its menu. */
export const STATUS_MENU = 'freecode.statusMenu';

export class StatusItem implements vscode.Disposable {
	private readonly item = vscode.window.createStatusBarItem('freecode.status', vscode.StatusBarAlignment.Left, 50);
	private readonly subs: vscode.Disposable[] = [];

	constructor(
		private readonly model: ServersModel,
		private readonly sidecar: Sidecar,
	) {
		this.item.name = 'FreeCode MCP Servers';
		this.item.command = STATUS_MENU;
		const off = model.onDidChange(() => this.update());
		this.subs.push(
			{ dispose: off },
			sidecar.onDidChangeState(() => this.update()),
			vscode.commands.registerCommand(STATUS_MENU, () => this.menu()),
		);
		this.update();
		this.item.show();
	}

	private async menu(): Promise<void> {
		const items = statusMenu(this.sidecar.state, this.model.summary());
		const pick = await vscode.window.showQuickPick(items, { placeHolder: 'FreeCode' });
		if (pick) await vscode.commands.executeCommand(pick.command, ...(pick.args ?? []));
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
