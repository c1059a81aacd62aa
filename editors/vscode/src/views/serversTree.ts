// The MCP Servers tree as data: what the sidecar has said about servers and
// tools (freecode/servers, freecode/servers/status, freecode/tools) folded
// into one model, and the nodes the view shows for it. serversView.ts turns
// the nodes into VS Code TreeItems; everything that decides what a node says
// lives here, free of `vscode`, so the headless tests drive it with plain
// sequences of ServerStatus and ToolInfo.

import type { PromptInfo, ResourceInfo, ServerState, ServerStatus, ToolInfo } from '../protocol';
import { oneLine, printable } from '../text';
import { groupNode, promptNode, resourceNode, type GroupKind, type GroupNode, type PromptNode, type ResourceNode } from './extrasTree';

/** Icon names a codicon; color is a theme color id. */
export interface Icon {
	id: string;
	color?: string;
}

/** ServerNode is one server as the view shows it. */
export interface ServerNode {
	kind: 'server';
	name: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	/** Words the package.json menus match on: "server state:<state> scope:<scope> [approved]". */
	contextValue: string;
	/** Whether the node has tool children. */
	expandable: boolean;
}

/** ToolNode is one tool under its server. */
export interface ToolNode {
	kind: 'tool';
	id: string;
	server: string;
	/** The server's name for the tool, as it sent it (label is the printable form). */
	name: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

export type Node = ServerNode | ToolNode | GroupNode | ResourceNode | PromptNode;

/** Summary counts servers by what the status bar reports. */
export interface Summary {
	total: number;
	/** Every server not disabled. */
	enabled: number;
	connected: number;
	failed: string[];
	awaitingApproval: string[];
	needsAuth: string[];
	busy: number;
	/** Servers started on demand that are not running: ready, their first call starts them. */
	idle: number;
}

const stateIcons: Record<ServerState, Icon> = {
	connected: { id: 'pass-filled', color: 'testing.iconPassed' },
	connecting: { id: 'loading~spin' },
	reconnecting: { id: 'sync~spin', color: 'editorWarning.foreground' },
	failed: { id: 'error', color: 'errorForeground' },
	awaitingApproval: { id: 'shield', color: 'editorWarning.foreground' },
	needsAuth: { id: 'key', color: 'editorWarning.foreground' },
	disabled: { id: 'circle-slash', color: 'disabledForeground' },
	stopped: { id: 'debug-stop' },
	// Never on a node: a removed server leaves the tree.
	removed: { id: 'trash', color: 'disabledForeground' },
	idle: { id: 'circle-large-outline' },
};

const stateWords: Record<ServerState, string> = {
	connected: 'connected',
	connecting: 'connecting…',
	reconnecting: 'reconnecting…',
	failed: 'failed',
	awaitingApproval: 'awaiting approval',
	needsAuth: 'sign-in needed',
	disabled: 'disabled',
	stopped: 'stopped',
	removed: 'removed',
	idle: 'idle',
};

/** The longest error text a description shows; the tooltip has all of it. */
const descriptionErrorChars = 80;

/** ServersModel folds the sidecar's statuses and tool lists into what the view shows. */
export class ServersModel {
	private readonly servers = new Map<string, ServerStatus>();
	private readonly tools = new Map<string, ToolInfo[]>();
	private readonly resources = new Map<string, ResourceInfo[]>();
	private readonly prompts = new Map<string, PromptInfo[]>();
	private readonly listeners = new Set<() => void>();

	/** onDidChange registers fn to run after every change; the result unregisters it. */
	onDidChange(fn: () => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	private changed(): void {
		for (const fn of this.listeners) fn();
	}

	/** setServers replaces every server with the freecode/servers answer: a server not in it is gone. */
	setServers(list: readonly ServerStatus[]): void {
		this.servers.clear();
		for (const s of list) this.servers.set(s.name, s);
		for (const m of [this.tools, this.resources, this.prompts]) {
			for (const name of [...m.keys()]) if (!this.servers.has(name)) m.delete(name);
		}
		this.changed();
	}

	/** updateServer applies one freecode/servers/status notification; a removed server leaves, with its tools. */
	updateServer(s: ServerStatus): void {
		if (s.state === 'removed') {
			this.servers.delete(s.name);
			this.tools.delete(s.name);
			this.resources.delete(s.name);
			this.prompts.delete(s.name);
		} else {
			this.servers.set(s.name, s);
		}
		this.changed();
	}

	/**
	 * setTools applies a freecode/tools answer. With server, the list is that
	 * server's whole tool set; without, it is every tool and replaces all.
	 * Built-in tools (no server) are not shown in this view.
	 */
	setTools(list: readonly ToolInfo[], server?: string): void {
		if (server === undefined) this.tools.clear();
		else this.tools.delete(server);
		for (const t of list) {
			if (t.server === undefined) continue;
			if (server !== undefined && t.server !== server) continue;
			const have = this.tools.get(t.server) ?? [];
			have.push(t);
			this.tools.set(t.server, have);
		}
		for (const have of this.tools.values()) have.sort((a, b) => a.name.localeCompare(b.name));
		this.changed();
	}

	/** setResources applies a freecode/resources answer for one server (empty: it has none, or is not connected). */
	setResources(server: string, list: readonly ResourceInfo[]): void {
		if (list.length === 0) this.resources.delete(server);
		else this.resources.set(server, [...list]);
		this.changed();
	}

	/** setPrompts applies a freecode/prompts answer for one server, as setResources. */
	setPrompts(server: string, list: readonly PromptInfo[]): void {
		if (list.length === 0) this.prompts.delete(server);
		else this.prompts.set(server, [...list].sort((a, b) => a.name.localeCompare(b.name)));
		this.changed();
	}

	/** clear forgets everything (the sidecar went away). */
	clear(): void {
		this.servers.clear();
		this.tools.clear();
		this.resources.clear();
		this.prompts.clear();
		this.changed();
	}

	server(name: string): ServerStatus | undefined {
		return this.servers.get(name);
	}

	/** allTools is every MCP tool the model knows, by server then name. */
	allTools(): ToolInfo[] {
		return this.serverNames().flatMap((n) => this.tools.get(n) ?? []);
	}

	tool(id: string): ToolInfo | undefined {
		return this.allTools().find((t) => t.id === id);
	}

	get size(): number {
		return this.servers.size;
	}

	private serverNames(): string[] {
		return [...this.servers.keys()].sort((a, b) => a.localeCompare(b));
	}

	/** serverNodes is the view's top level, by name. */
	serverNodes(): ServerNode[] {
		return this.serverNames().map((n) => {
			const node = serverNode(this.servers.get(n)!, this.tools.get(n) ?? []);
			// Resources and prompts make a server expandable too.
			node.expandable ||= this.resources.has(n) || this.prompts.has(n);
			return node;
		});
	}

	/** childNodes is what a server's node holds: its tools, then its Resources and Prompts groups when it has any. */
	childNodes(server: string): Node[] {
		const out: Node[] = this.toolNodes(server);
		const r = this.resources.get(server);
		if (r) out.push(groupNode(server, 'resources', r.length));
		const pr = this.prompts.get(server);
		if (pr) out.push(groupNode(server, 'prompts', pr.length));
		return out;
	}

	/** groupNodes is the children of a server's Resources or Prompts group. */
	groupNodes(server: string, group: GroupKind): (ResourceNode | PromptNode)[] {
		return group === 'resources'
			? (this.resources.get(server) ?? []).map(resourceNode)
			: (this.prompts.get(server) ?? []).map(promptNode);
	}

	/** toolNodes is the children of a server's node. */
	toolNodes(server: string): ToolNode[] {
		return (this.tools.get(server) ?? []).map(toolNode);
	}

	summary(): Summary {
		const sum: Summary = { total: 0, enabled: 0, connected: 0, failed: [], awaitingApproval: [], needsAuth: [], busy: 0, idle: 0 };
		for (const name of this.serverNames()) {
			const s = this.servers.get(name)!;
			sum.total++;
			if (s.state !== 'disabled') sum.enabled++;
			switch (s.state) {
				case 'connected':
					sum.connected++;
					break;
				case 'failed':
					sum.failed.push(name);
					break;
				case 'awaitingApproval':
					sum.awaitingApproval.push(name);
					break;
				case 'needsAuth':
					sum.needsAuth.push(name);
					break;
				case 'connecting':
				case 'reconnecting':
					sum.busy++;
					break;
				case 'idle':
					sum.idle++;
					break;
			}
		}
		return sum;
	}
}

function plural(n: number, one: string, many: string): string {
	return `${n} ${n === 1 ? one : many}`;
}

/** serverNode describes one server: state icon and words, tool count, scope. */
export function serverNode(s: ServerStatus, tools: readonly ToolInfo[]): ServerNode {
	const parts: string[] = [];
	if (s.state === 'failed' && s.lastError) {
		parts.push(`failed: ${oneLine(s.lastError, descriptionErrorChars)}`);
	} else {
		parts.push(stateWords[s.state]);
	}
	// A reconnecting server keeps its tools registered, and so does an idle
	// one (from its manifest), so their count still matters.
	if (hasTools(s.state)) {
		parts.push(plural(s.toolCount, 'tool', 'tools') + (s.toolListCut ? ' (list cut)' : ''));
	}
	const review = tools.filter((t) => t.definitionChanged || t.new).length;
	if (review > 0) parts.push(`${review} to review`);
	if (s.scope === 'project') parts.push('project');
	const words = [
		'server',
		`state:${s.state}`,
		`scope:${s.scope}`,
		// A remote server may hold a sign-in: it can sign out.
		...(s.type === 'remote' ? ['remote'] : []),
		// A project server that runs, or ran, was approved: it can be revoked.
		...(s.scope === 'project' && s.state !== 'awaitingApproval' ? ['approved'] : []),
	];
	return {
		kind: 'server',
		name: s.name,
		label: printable(s.name),
		description: parts.join(' · '),
		tooltip: serverTooltip(s),
		icon: stateIcons[s.state],
		contextValue: words.join(' '),
		expandable: tools.length > 0,
	};
}

/** serverTooltip is everything the status says, one fact a line, with what the server sent made printable. */
export function serverTooltip(s: ServerStatus): string {
	const lines = [`${printable(s.name)} — ${stateWords[s.state]}`];
	const kind = s.type === 'local' ? 'local (stdio)' : `remote${s.transport ? ` (${s.transport})` : ''}`;
	lines.push(`${kind}, ${s.scope === 'project' ? "from this project's settings" : 'from your config'}`);
	if (s.command && s.command.length > 0) lines.push(`command: ${commandLine(s.command)}`);
	if (s.url) lines.push(`url: ${printable(s.url)}`);
	if (s.serverInfo) lines.push(`server: ${printable(s.serverInfo.name)} ${printable(s.serverInfo.version)}`);
	if (s.protocolVersion) lines.push(`protocol: ${printable(s.protocolVersion)}`);
	if (hasTools(s.state)) lines.push(`tools: ${s.toolCount}`);
	if (s.toolListCut) lines.push(`tool list cut: ${printable(s.toolListCut)}`);
	if (s.pid !== undefined) lines.push(`pid: ${s.pid}`);
	if (s.connectedAt) lines.push(`connected since: ${printable(s.connectedAt)}`);
	if (s.lastPingMs !== undefined) lines.push(`last ping: ${s.lastPingMs} ms`);
	if (s.state === 'awaitingApproval') lines.push('This project ships this server; it runs once you approve it.');
	if (s.state === 'needsAuth') lines.push('The server needs you to sign in.');
	if (s.state === 'idle') lines.push('Started on demand: the first call of one of its tools starts it.');
	if (s.lastError) lines.push(`last error: ${printable(s.lastError)}`);
	if (s.stderrTail && s.stderrTail.length > 0) {
		lines.push('stderr:');
		for (const l of s.stderrTail.slice(-5)) lines.push(`  ${printable(l)}`);
	}
	return lines.join('\n');
}

/** hasTools says whether a server in state has its tools registered. */
function hasTools(state: ServerState): boolean {
	return state === 'connected' || state === 'reconnecting' || state === 'idle';
}

/**
 * commandLine shows an argv as one line a person can read back: an argument
 * that is empty or holds whitespace, a quote or a backslash is
 * single-quoted, so the words stay apart. ${env:NAME} is FreeCode's, not a
 * shell's, and is shown as configured.
 */
export function commandLine(argv: readonly string[]): string {
	return argv
		.map((a) => (a === '' || /[\s'"\\]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a))
		.map(printable)
		.join(' ');
}

/** toolKind says what a tool may do: read-only only when it says so (MCP's hints default to destructive). */
export function toolKind(t: ToolInfo): 'read-only' | 'destructive' | 'writes' {
	if (t.readOnly) return 'read-only';
	return t.destructive === false ? 'writes' : 'destructive';
}

const toolIcons: Record<ReturnType<typeof toolKind>, Icon> = {
	'read-only': { id: 'eye' },
	writes: { id: 'edit' },
	destructive: { id: 'warning', color: 'editorWarning.foreground' },
};

const reviewIcon: Icon = { id: 'diff', color: 'editorWarning.foreground' };

/**
 * toolNode describes one tool: its name, read-only or destructive, and its
 * description as tooltip; a tool whose definition awaits review says so,
 * and its context value carries review:changed or review:new for the
 * Accept and Show Diff commands.
 */
export function toolNode(t: ToolInfo): ToolNode {
	const k = toolKind(t);
	const tip = [`${printable(t.id)} — ${k}`];
	if (t.title) tip.push(printable(t.title));
	if (t.description) tip.push('', printable(t.description));
	if (t.alias) tip.push('', `sent to providers as ${printable(t.alias)}`);
	const review = t.definitionChanged ? 'changed' : t.new ? 'new' : undefined;
	if (review === 'changed') {
		tip.push(
			'',
			'Its server now lists another definition than the one you accepted. This is the accepted one; every call asks until you accept the change (Show Definition Diff).',
		);
	} else if (review === 'new') {
		tip.push('', 'New since you accepted this server\'s tools: not treated as read-only until you accept it.');
	}
	return {
		kind: 'tool',
		id: t.id,
		server: t.server ?? '',
		name: t.name,
		label: printable(t.name),
		description: review === 'changed' ? `${k} · definition changed` : review === 'new' ? `${k} · new` : k,
		tooltip: tip.join('\n'),
		icon: review ? reviewIcon : toolIcons[k],
		contextValue: review ? `tool ${k} review:${review}` : `tool ${k}`,
	};
}
