// What the page shows of the model: the summary line, the config's
// problems, and a card per server (state, facts, tools with their marks and
// review badges, resources, prompts, log). The words are the extension's
// (views/serversTree.ts, views/problemsTree.ts, statusText.ts); the page
// lays them out. Rendering is whole and cheap: the model is small.

import { headline, type ServersModel } from '../../editors/vscode/src/model';
import type { Problem, ServerStatus, ToolInfo } from '../../frontend/src/protocol.gen';
import { actionWords, canDo, type ServerAction } from '../../editors/vscode/src/serverActions';
import { statusText } from '../../editors/vscode/src/statusText';
import { printable } from '../../editors/vscode/src/text';
import { groupChildren } from '../../editors/vscode/src/views/extrasTree';
import { serverNode, serverTooltip, toolNode } from '../../editors/vscode/src/views/serversTree';
import type { PromptNode, ResourceNode } from '../../editors/vscode/src/nodes';
import { button, h } from './dom';
import type { Logs } from './logs';

/** Actions are what the page's buttons do; main.ts implements them on the session. */
export interface Actions {
	server(action: ServerAction, s: ServerStatus): void;
	run(t: ToolInfo): void;
	/** review shows the tool's change and offers to accept or reject it. */
	review(t: ToolInfo): void;
	readResource(server: string, uri: string): void;
	getPrompt(server: string, name: string): void;
}

/** The per-server actions the page offers, in order; the extension's canDo says when. */
const serverButtons: ServerAction[] = ['start', 'stop', 'restart', 'signIn', 'signOut', 'approve', 'revoke'];

/** The ones whose extension title is not what a button should say. */
const buttonWords: Partial<Record<ServerAction, string>> = {
	approve: 'Approve…',
	revoke: 'Revoke Approval',
	signIn: 'Sign In',
	signOut: 'Sign Out',
};

/** Sidecar is what the page knows of the sidecar: the extension's states, and one a browser tab alone has. */
export type Sidecar = 'starting' | 'running' | 'stopped' | 'signedOut';

/** View renders the model into the page, keeping which parts the user opened. */
export class View {
	/** Which parts the user opened, or (for a part open at first, the tools) closed. */
	private readonly toggled = new Set<string>();

	constructor(
		private readonly root: HTMLElement,
		private readonly model: ServersModel,
		private readonly logs: Logs,
		private readonly actions: Actions,
	) {}

	render(sidecar: Sidecar): void {
		const sum = this.model.summary();
		const words =
			sidecar === 'signedOut'
				? 'Not signed in: the sidecar runs, but this browser has no session with it.'
				: statusText(sidecar, sum).tooltip.replace(/^FreeCode: /, '').split('\n')[0];
		const summary = h('p', { id: 'summary', 'data-sidecar': sidecar }, words);
		// Each problem once, at its place in the file: the extension's
		// tooltip says it again and points at a click the page has not.
		const problems = this.model.fileProblems().map((f) =>
			h(
				'div',
				{ class: 'problem', role: 'alert' },
				h('strong', {}, headline(f, this.model.size > 0)),
				h('ul', {}, ...f.problems.map((p) => h('li', {}, problemLine(f.path, p)))),
			),
		);
		const cards = this.model.servers().map((s) => this.card(s));
		const empty = this.model.loaded && cards.length === 0 ? h('p', { class: 'empty' }, 'No MCP server is configured yet. Add one to your config (freecode mcp add) and it shows here.') : null;
		this.root.replaceChildren(summary, ...problems, empty ?? '', ...cards);
		for (const pre of this.root.querySelectorAll<HTMLElement>('pre.log')) pre.scrollTop = pre.scrollHeight;
	}

	/** logged appends a log line to the open log of its server, following it when it was at the bottom. */
	logged(server: string): void {
		const pre = this.root.querySelector<HTMLElement>(`section.server[data-server="${CSS.escape(server)}"] pre.log`);
		if (!pre) return;
		const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
		const lines = this.logs.of(server);
		const last = lines[lines.length - 1];
		if (last) pre.append(logLine(last));
		while (pre.childElementCount > lines.length) pre.firstElementChild?.remove();
		if (atEnd) pre.scrollTop = pre.scrollHeight;
	}

	private details(key: string, summary: string, ...body: (Node | string)[]): HTMLDetailsElement {
		const first = key.startsWith('tools ');
		const d = h('details', { open: this.toggled.has(key) !== first, 'data-part': key.split(' ')[0] }, h('summary', {}, summary), ...body);
		d.addEventListener('toggle', () => (d.open !== first ? this.toggled.add(key) : this.toggled.delete(key)));
		return d;
	}

	private card(s: ServerStatus): HTMLElement {
		const tools = this.model.toolsOf(s.name);
		const node = serverNode(s, tools);
		const buttons = h('div', { class: 'buttons' });
		for (const a of serverButtons) {
			if (canDo(a, s)) buttons.append(button(buttonWords[a] ?? actionWords[a].title.replace(/ Server$/, ''), () => this.actions.server(a, s)));
		}
		const facts = h('pre', { class: 'facts' }, serverTooltip(s));
		const parts: HTMLElement[] = [];
		if (tools.length > 0) {
			parts.push(this.details(`tools ${s.name}`, `Tools (${tools.length})`, h('ul', { class: 'tools' }, ...tools.map((t) => this.tool(t)))));
		}
		for (const group of ['resources', 'prompts'] as const) {
			const items = groupChildren(this.model, s.name, group);
			if (items.length === 0) continue;
			const open = (n: ResourceNode | PromptNode) =>
				n.kind === 'resource' ? this.actions.readResource(s.name, n.uri) : this.actions.getPrompt(s.name, n.name);
			const title = `${group === 'resources' ? 'Resources' : 'Prompts'} (${items.length})`;
			const list = h('ul', {}, ...items.map((n) => h('li', { title: n.tooltip, 'data-item': n.kind === 'resource' ? n.uri : n.name }, button(n.label, () => open(n)), ` ${n.description}`)));
			parts.push(this.details(`${group} ${s.name}`, title, list));
		}
		this.logs.seed(s.name, s.stderrTail);
		parts.push(this.details(`log ${s.name}`, 'Log', h('pre', { class: 'log' }, ...this.logs.of(s.name).map(logLine))));
		return h(
			'section',
			{ class: 'server', 'data-server': s.name, 'data-state': s.state },
			h(
				'h2',
				{},
				h('span', { class: `dot ${s.state}` }),
				node.label,
				h('span', { class: 'state' }, node.description),
				s.pid !== undefined ? h('span', { class: 'pid' }, `pid ${s.pid}`) : '',
			),
			s.lastError ? h('p', { class: 'error' }, printable(s.lastError)) : '',
			buttons,
			this.details(`facts ${s.name}`, 'Details', facts),
			...parts,
		);
	}

	private tool(t: ToolInfo): HTMLElement {
		const n = toolNode(t);
		const kind = n.description.split(' · ')[0];
		const review = t.definitionChanged ? 'changed' : t.new ? 'new' : undefined;
		return h(
			'li',
			{ class: 'tool', 'data-tool': t.id, title: n.tooltip },
			h('span', { class: 'name' }, n.label),
			h('span', { class: `mark ${kind}` }, kind),
			review ? h('span', { class: 'mark review' }, review === 'changed' ? 'definition changed' : 'new') : '',
			h('span', { class: 'desc' }, t.description ? printable(t.description) : ''),
			review ? button('Review…', () => this.actions.review(t), { class: 'review' }) : '',
			button('Run…', () => this.actions.run(t), { class: 'run' }),
		);
	}
}

function logLine(l: { time: string; level: string; source: string; text: string }): HTMLElement {
	return h('div', { class: `line ${l.level}` }, l.time ? `${l.time} ` : '', h('span', { class: 'src' }, l.source), ` ${l.text}`);
}

/** problemLine is one problem as the page shows it: file:line:col: key: message, a warning said so. */
export function problemLine(path: string, p: Problem): string {
	const where = `${printable(path)}:${p.line ?? 1}:${p.column ?? 1}`;
	const warn = p.severity === 'warning' ? ' (a warning: the rest loads)' : '';
	return `${where}: ${p.key ? `${printable(p.key)}: ` : ''}${printable(p.message)}${warn}`;
}
