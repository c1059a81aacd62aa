// What the sidecar has said about servers and tools (freecode/servers,
// freecode/servers/status, freecode/tools, and each server's resources and
// prompts), folded into one model the session writes and the views, the
// status bar and the commands read. It knows nothing of how it is shown:
// the extension's views build the tree's nodes from it, the page its cards.
// Pure: no `vscode` import, so the headless tests drive it with plain
// sequences of ServerStatus and ToolInfo.

import type { ConfigProblems, Problem, PromptInfo, ResourceInfo, ServerState, ServerStatus, TaskInfo, ToolInfo } from './protocol.gen';
import { missingSecrets } from './secrets';

/** Summary counts servers by what the status bar reports. */
export interface Summary {
	total: number;
	/** Every server not disabled. */
	enabled: number;
	connected: number;
	failed: string[];
	awaitingApproval: string[];
	needsAuth: string[];
	/** Failed servers whose entry names a secret that is not set (in failed too): Set Secret is their fix. */
	needsSecret: string[];
	/** Servers the organization's policy blocks: never run, not counted as enabled. */
	blocked: string[];
	busy: number;
	/** Servers started on demand that are not running: ready, their first call starts them. */
	idle: number;
	/** Problems in the config and settings files, all files together, warnings included. */
	problems: number;
	/** Whether a file does not load, so the sidecar runs its last good state. */
	configBroken: boolean;
	/** A line per file with problems, for the status bar's tooltip. */
	problemLines: string[];
}

/** FileProblems is one file's problems as freecode/config/problems last told them. */
export type FileProblems = Readonly<ConfigProblems> & { readonly problems: readonly Problem[] };

/** broken says whether a file's problems stop it from loading. */
export function broken(f: FileProblems): boolean {
	return f.lastGood === true || f.problems.some((p) => p.severity !== 'warning');
}

function plural(n: number, one: string, many: string): string {
	return `${n} ${n === 1 ? one : many}`;
}

/** fileWords names a file as a user knows it: "the config", or a settings file by its name. */
export function fileWords(path: string): string {
	const base = path.split(/[\\/]/).pop() ?? path;
	if (/^settings(\.local)?\.json$/.test(base)) return base;
	return 'the config';
}

/**
 * headline says what is wrong with a file and what runs meanwhile: the
 * sidecar's own summary when it sent one, else the same words made here.
 * A file that does not load runs its last good state, or, when no server
 * loaded yet, nothing.
 */
export function headline(f: FileProblems, haveServers: boolean): string {
	const text = f.summary ?? madeHeadline(f, haveServers);
	return text.charAt(0).toUpperCase() + text.slice(1);
}

function madeHeadline(f: FileProblems, haveServers: boolean): string {
	const what = fileWords(f.path);
	if (!broken(f)) return `${what} has ${plural(f.problems.length, 'warning', 'warnings')}`;
	const has = `${what} has ${plural(f.problems.length, 'problem', 'problems')}`;
	return haveServers ? `${has}; showing the last good one` : `${has}; fix it to load its servers`;
}

/** ServersModel holds the last word of the sidecar on each server, and tells listeners when it changes. */
export class ServersModel {
	private readonly statuses = new Map<string, ServerStatus>();
	private readonly tools = new Map<string, ToolInfo[]>();
	private readonly resources = new Map<string, ResourceInfo[]>();
	private readonly prompts = new Map<string, PromptInfo[]>();
	private readonly problems = new Map<string, FileProblems>();
	/** The tasks calls started (freecode/tasks, freecode/tasks/changed), by "server taskId". */
	private readonly taskInfos = new Map<string, TaskInfo>();
	private readonly listeners = new Set<() => void>();

	/** onDidChange registers fn to run after every change; the result unregisters it. */
	onDidChange(fn: () => void): () => void {
		this.listeners.add(fn);
		return () => this.listeners.delete(fn);
	}

	private changed(): void {
		for (const fn of this.listeners) fn();
	}

	private everLoaded = false;

	/** loaded says whether freecode/servers was read since the sidecar (re)started. */
	get loaded(): boolean {
		return this.everLoaded;
	}

	/** setServers replaces every server with the freecode/servers answer: a server not in it is gone. */
	setServers(list: readonly ServerStatus[]): void {
		this.everLoaded = true;
		this.statuses.clear();
		for (const s of list) this.statuses.set(s.name, s);
		for (const m of [this.tools, this.resources, this.prompts]) {
			for (const name of [...m.keys()]) if (!this.statuses.has(name)) m.delete(name);
		}
		this.changed();
	}

	/** updateServer applies one freecode/servers/status notification; a removed server leaves, with its tools. */
	updateServer(s: ServerStatus): void {
		if (s.state === 'removed') {
			this.statuses.delete(s.name);
			this.tools.delete(s.name);
			this.resources.delete(s.name);
			this.prompts.delete(s.name);
		} else {
			this.statuses.set(s.name, s);
		}
		this.changed();
	}

	/**
	 * setTools applies a freecode/tools answer. With server, the list is that
	 * server's whole tool set; without, it is every tool and replaces all.
	 * Built-in tools (no server) are not kept: the model is of MCP servers.
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

	/** setProblems applies a freecode/config/problems notification: a file's problems, none once it is fixed. */
	setProblems(p: ConfigProblems): void {
		if (p.problems.length === 0) this.problems.delete(p.path);
		else this.problems.set(p.path, { ...p, problems: [...p.problems] });
		this.changed();
	}

	/** setTasks replaces the tasks with a freecode/tasks answer. */
	setTasks(list: readonly TaskInfo[]): void {
		this.taskInfos.clear();
		for (const t of list) this.taskInfos.set(`${t.server} ${t.taskId}`, t);
		this.changed();
	}

	/** updateTask applies one freecode/tasks/changed (or a call's ToolResult.task); an older word than the one held is ignored. */
	updateTask(t: TaskInfo): void {
		const key = `${t.server} ${t.taskId}`;
		const have = this.taskInfos.get(key);
		if (have && Date.parse(have.updatedAt) > Date.parse(t.updatedAt)) return;
		this.taskInfos.set(key, t);
		this.changed();
	}

	/** tasks is every task, the newest first. */
	tasks(): TaskInfo[] {
		return [...this.taskInfos.values()].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || a.taskId.localeCompare(b.taskId));
	}

	/** fileProblems is every file that has problems now, by path. */
	fileProblems(): FileProblems[] {
		return [...this.problems.keys()].sort().map((path) => this.problems.get(path)!);
	}

	/** clear forgets everything (the sidecar went away). */
	clear(): void {
		this.everLoaded = false;
		this.problems.clear();
		this.taskInfos.clear();
		this.statuses.clear();
		this.tools.clear();
		this.resources.clear();
		this.prompts.clear();
		this.changed();
	}

	server(name: string): ServerStatus | undefined {
		return this.statuses.get(name);
	}

	/** servers is every server's status, by name. */
	servers(): ServerStatus[] {
		return this.names().map((n) => this.statuses.get(n)!);
	}

	/** toolsOf is a server's MCP tools, by name. */
	toolsOf(server: string): readonly ToolInfo[] {
		return this.tools.get(server) ?? [];
	}

	/** resourcesOf is a server's resources as it listed them; none when it is not connected. */
	resourcesOf(server: string): readonly ResourceInfo[] {
		return this.resources.get(server) ?? [];
	}

	/** promptsOf is a server's prompts, by name; none when it is not connected. */
	promptsOf(server: string): readonly PromptInfo[] {
		return this.prompts.get(server) ?? [];
	}

	/** allTools is every MCP tool the model knows, by server then name. */
	allTools(): ToolInfo[] {
		return this.names().flatMap((n) => this.tools.get(n) ?? []);
	}

	tool(id: string): ToolInfo | undefined {
		return this.allTools().find((t) => t.id === id);
	}

	get size(): number {
		return this.statuses.size;
	}

	private names(): string[] {
		return [...this.statuses.keys()].sort((a, b) => a.localeCompare(b));
	}

	summary(): Summary {
		const sum: Summary = { total: 0, enabled: 0, connected: 0, failed: [], awaitingApproval: [], needsAuth: [], needsSecret: [], blocked: [], busy: 0, idle: 0, problems: 0, configBroken: false, problemLines: [] };
		for (const f of this.fileProblems()) {
			sum.problems += f.problems.length;
			sum.configBroken ||= broken(f);
			sum.problemLines.push(headline(f, this.statuses.size > 0));
		}
		for (const s of this.servers()) {
			sum.total++;
			if (s.state !== 'disabled' && s.state !== 'blocked') sum.enabled++;
			switch (s.state) {
				case 'connected':
					sum.connected++;
					break;
				case 'failed':
					sum.failed.push(s.name);
					if (missingSecrets(s).length > 0) sum.needsSecret.push(s.name);
					break;
				case 'awaitingApproval':
					sum.awaitingApproval.push(s.name);
					break;
				case 'needsAuth':
					sum.needsAuth.push(s.name);
					break;
				case 'blocked':
					sum.blocked.push(s.name);
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

/**
 * hasTools says whether a server in state has its tools registered: a
 * reconnecting server keeps them, and so does an idle one (from its
 * manifest), so their count still matters.
 */
export function hasTools(state: ServerState): boolean {
	return state === 'connected' || state === 'reconnecting' || state === 'idle';
}

/** toolKind says what a tool may do: read-only only when it says so (MCP's hints default to destructive). */
export function toolKind(t: ToolInfo): 'read-only' | 'destructive' | 'writes' {
	if (t.readOnly) return 'read-only';
	return t.destructive === false ? 'writes' : 'destructive';
}
