// The MCP Servers view: the tree's nodes (tree.ts) as VS Code TreeItems, redrawn
// when the model changes (which only notifications make it do). It also
// keeps the context keys the welcome views and menus read.

import * as vscode from 'vscode';
import type { Sidecar } from '../client';
import type { ServersModel } from '../model';
import type { Icon, Node } from '../nodes';
import type { SidecarState } from '../statusText';
import { live, taskNode } from './tasksTree';
import { children } from './tree';

class Provider implements vscode.TreeDataProvider<Node> {
	private readonly emitter = new vscode.EventEmitter<Node | undefined>();
	readonly onDidChangeTreeData = this.emitter.event;

	constructor(private readonly model: ServersModel) {}

	refresh(): void {
		this.emitter.fire(undefined);
	}

	getChildren(node?: Node): Node[] {
		return children(this.model, node);
	}

	getTreeItem(node: Node): vscode.TreeItem {
		const expand =
			node.kind === 'server' && node.expandable
				? vscode.TreeItemCollapsibleState.Expanded
				: node.kind === 'group'
					? vscode.TreeItemCollapsibleState.Collapsed
					: node.kind === 'tasks'
						? vscode.TreeItemCollapsibleState.Expanded
					: vscode.TreeItemCollapsibleState.None;
		const item = new vscode.TreeItem(node.label, expand);
		// Stable ids keep what the user expanded or collapsed across redraws.
		// VS Code also keeps an id's first collapsible state, so a server
		// listed before its tools arrived would stay a leaf, or show
		// collapsed: its id changes once it has children.
		item.id = nodeId(node);
		item.description = node.description;
		item.tooltip = node.tooltip;
		item.iconPath = themeIcon(node.icon);
		item.contextValue = node.contextValue;
		// A click (or Enter) does what the row's inline button does.
		const click = clickCommands[node.kind];
		if (click) item.command = { command: click, title: node.label, arguments: [node] };
		return item;
	}

	dispose(): void {
		this.emitter.dispose();
	}
}

const clickCommands: Partial<Record<Node['kind'], string>> = {
	resource: 'freecode.resource.open',
	tool: 'freecode.runTool',
	prompt: 'freecode.prompt.get',
	notice: 'freecode.showConfigProblems',
};

function nodeId(node: Node): string {
	switch (node.kind) {
		case 'server':
			return `server:${node.name}${node.expandable ? ':tools' : ''}`;
		case 'tool':
			return `tool:${node.id}`;
		case 'group':
			return `${node.group}:${node.server}`;
		case 'resource':
			return `resource:${node.server}:${node.uri}`;
		case 'prompt':
			return `prompt:${node.server}:${node.name}`;
		case 'notice':
			return `notice:${node.path}`;
		case 'tasks':
			return 'tasks';
		case 'task':
			return `task:${node.server}:${node.taskId}`;
	}
}

/** liveRows is what the running tasks' rows say now, to tell when their time has moved on. */
function liveRows(model: ServersModel): string {
	const now = Date.now();
	return model
		.tasks()
		.filter((t) => live(t.status))
		.map((t) => `${t.server}\t${t.taskId}\t${taskNode(t, now).description}`)
		.join('\n');
}

function themeIcon(i: Icon): vscode.ThemeIcon {
	return new vscode.ThemeIcon(i.id, i.color ? new vscode.ThemeColor(i.color) : undefined);
}

function setContext(key: string, value: unknown): void {
	void vscode.commands.executeCommand('setContext', key, value);
}

/** ServersView is the tree view and its context keys. */
export class ServersView implements vscode.Disposable {
	private readonly provider: Provider;
	readonly view: vscode.TreeView<Node>;
	private readonly subs: vscode.Disposable[] = [];

	constructor(model: ServersModel, sidecar: Sidecar) {
		this.provider = new Provider(model);
		this.view = vscode.window.createTreeView('freecode.servers', {
			treeDataProvider: this.provider,
			showCollapseAll: true,
		});
		const off = model.onDidChange(() => {
			this.provider.refresh();
			setContext('freecode.serverCount', model.size);
		});
		// A running task's time moves on without a notification. The tree
		// is redrawn only when a row's words change (once a minute): a
		// redraw replaces a row's inline buttons, and a click on Cancel Task
		// that a redraw splits between its press and release is lost.
		let shown = '';
		const tick = setInterval(() => {
			const now = liveRows(model);
			if (now !== shown) this.provider.refresh();
			shown = now;
		}, 1000);
		this.subs.push({ dispose: () => clearInterval(tick) });
		this.subs.push({ dispose: off }, sidecar.onDidChangeState((s) => this.onState(s)));
		setContext('freecode.serverCount', 0);
		this.onState(sidecar.state);
	}

	private onState(s: SidecarState): void {
		setContext('freecode.sidecar', s);
		// Not view.message: a message hides the welcome view, whose buttons
		// are the way out. The path it looked at is in the sidecar's log.
		this.view.description = s === 'missing' ? 'sidecar not found' : s === 'failed' ? 'sidecar stopped' : undefined;
	}

	dispose(): void {
		this.subs.forEach((s) => s.dispose());
		this.view.dispose();
		this.provider.dispose();
	}
}
