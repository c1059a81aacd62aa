// The MCP Servers view: the tree's nodes (tree.ts) as VS Code TreeItems, redrawn
// when the model changes (which only notifications make it do). It also
// keeps the context keys the welcome views and menus read.

import * as vscode from 'vscode';
import type { Sidecar } from '../client';
import type { ServersModel } from '../../../../frontend/src/model';
import type { Icon, Node } from '../nodes';
import type { SidecarState } from '../../../../frontend/src/statusText';
import { live } from './tasksTree';
import { children } from './tree';

/** How many servers the view may hold for them to show their tools unopened. */
const expandedUpTo = 3;

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
		// A few servers show their tools at once; in a longer list each
		// server is one row until opened, so that none falls below the fold
		// (an imported one looked missing). VS Code keeps what the user
		// opened or closed, by id.
		const expand =
			node.kind === 'server' && node.expandable
				? this.model.size <= expandedUpTo
					? vscode.TreeItemCollapsibleState.Expanded
					: vscode.TreeItemCollapsibleState.Collapsed
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
		const click = node.kind === 'task' ? (node.contextValue === 'task result' ? 'freecode.task.showResult' : undefined) : clickCommands[node.kind];
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

/** treeWords is everything the tree shows at time now, to tell whether a redraw would change anything. */
function treeWords(model: ServersModel, now: number): string {
	const out: string[] = [];
	const walk = (node?: Node) => {
		for (const n of children(model, node, now)) {
			out.push(JSON.stringify(n));
			walk(n);
		}
	};
	walk();
	return out.join('\n');
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
		// The tree is redrawn only when what it shows changed. A redraw
		// replaces the rows' inline buttons, and VS Code runs a button
		// clicked meanwhile without its row (or not at all): many changes
		// of the model (a status repeated, a tool list re-read) change
		// nothing shown.
		let shown = '';
		const redraw = () => {
			const now = treeWords(model, Date.now());
			if (now !== shown) this.provider.refresh();
			shown = now;
		};
		const off = model.onDidChange(() => {
			redraw();
			setContext('freecode.serverCount', model.size);
			setContext('freecode.hasTools', model.allTools().length > 0);
		});
		// A running task's time moves on without a notification; its row
		// says it in whole minutes, so this redraws once a minute.
		const tick = setInterval(() => {
			if (model.tasks().some((t) => live(t.status))) redraw();
		}, 1000);
		this.subs.push({ dispose: () => clearInterval(tick) });
		this.subs.push({ dispose: off }, sidecar.onDidChangeState((s) => this.onState(s)));
		setContext('freecode.serverCount', 0);
		setContext('freecode.hasTools', false);
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
