// The MCP Servers tree as data: what the sidecar has said about servers and
// tools (freecode/servers, freecode/servers/status, freecode/tools) folded
// into one model, and the nodes the view shows for it. serversView.ts turns
// the nodes into VS Code TreeItems; everything that decides what a node says
// lives here, free of `vscode`, so the headless tests drive it with plain
// sequences of ServerStatus and ToolInfo.

import type { ServerState, ServerStatus, ToolInfo } from '../protocol';
import { oneLine, printable } from '../text';

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
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

export type Node = ServerNode | ToolNode;

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
};

/** The longest error text a description shows; the tooltip has all of it. */
const descriptionErrorChars = 80;

/** ServersModel folds the sidecar's statuses and tool lists into what the view shows. */
export class ServersModel {
	private readonly servers = new Map<string, ServerStatus>();
	private readonly tools = new Map<string, ToolInfo[]>();
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
		for (const name of [...this.tools.keys()]) {
			if (!this.servers.has(name)) this.tools.delete(name);
		}
		this.changed();
	}

	/** updateServer applies one freecode/servers/status notification; a removed server leaves, with its tools. */
	updateServer(s: ServerStatus): void {
		if (s.state === 'removed') {
			this.servers.delete(s.name);
			this.tools.delete(s.name);
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

	/** clear forgets everything (the sidecar went away). */
	clear(): void {
		this.servers.clear();
		this.tools.clear();
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
		return this.serverNames().map((n) => serverNode(this.servers.get(n)!, this.tools.get(n) ?? []));
	}

	/** toolNodes is the children of a server's node. */
	toolNodes(server: string): ToolNode[] {
		return (this.tools.get(server) ?? []).map(toolNode);
	}

	summary(): Summary {
		const sum: Summary = { total: 0, enabled: 0, connected: 0, failed: [], awaitingApproval: [], needsAuth: [], busy: 0 };
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
	// A reconnecting server keeps its tools registered, so its count still matters.
	if (s.state === 'connected' || s.state === 'reconnecting') {
		parts.push(plural(s.toolCount, 'tool', 'tools') + (s.toolListCut ? ' (list cut)' : ''));
	}
	if (s.scope === 'project') parts.push('project');
	const words = [
		'server',
		`state:${s.state}`,
		`scope:${s.scope}`,
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
	if (s.state === 'connected' || s.state === 'reconnecting') lines.push(`tools: ${s.toolCount}`);
	if (s.toolListCut) lines.push(`tool list cut: ${printable(s.toolListCut)}`);
	if (s.pid !== undefined) lines.push(`pid: ${s.pid}`);
	if (s.connectedAt) lines.push(`connected since: ${printable(s.connectedAt)}`);
	if (s.lastPingMs !== undefined) lines.push(`last ping: ${s.lastPingMs} ms`);
	if (s.state === 'awaitingApproval') lines.push('This project ships this server; it runs once you approve it.');
	if (s.state === 'needsAuth') lines.push('The server needs you to sign in.');
	if (s.lastError) lines.push(`last error: ${printable(s.lastError)}`);
	if (s.stderrTail && s.stderrTail.length > 0) {
		lines.push('stderr:');
		for (const l of s.stderrTail.slice(-5)) lines.push(`  ${printable(l)}`);
	}
	return lines.join('\n');
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

/** toolNode describes one tool: its name, read-only or destructive, and its description as tooltip. */
export function toolNode(t: ToolInfo): ToolNode {
	const k = toolKind(t);
	const tip = [`${printable(t.id)} — ${k}`];
	if (t.title) tip.push(printable(t.title));
	if (t.description) tip.push('', printable(t.description));
	if (t.alias) tip.push('', `sent to providers as ${printable(t.alias)}`);
	return {
		kind: 'tool',
		id: t.id,
		server: t.server ?? '',
		label: printable(t.name),
		description: k,
		tooltip: tip.join('\n'),
		icon: toolIcons[k],
		contextValue: `tool ${k}`,
	};
}
