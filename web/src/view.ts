// What the page shows of the model: the summary line, the config's
// problems, and a card per server (state, facts, tools with their marks and
// review badges, resources, prompts, log). The words are the ones the
// extension shows too (frontend/src: rows.ts, model.ts, statusText.ts); the
// page lays them out. Rendering is whole and cheap: the model is small.

import { headline, type ServersModel } from '../../frontend/src/model';
import type { Problem, ServerStatus, ToolInfo } from '../../frontend/src/protocol.gen';
import { actionWords, canDo, type ServerAction } from '../../frontend/src/serverActions';
import { statusText } from '../../frontend/src/statusText';
import { printable } from '../../frontend/src/text';
import { promptRow, resourceRow, serverRow, toolRow, type Row } from '../../frontend/src/rows';
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
const serverButtons: ServerAction[] = ['setSecret', 'start', 'stop', 'restart', 'signIn', 'signOut', 'approve', 'revoke'];

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
		const empty = this.model.loaded && cards.length === 0 ? h('p', { class: 'empty' }, 'No MCP server is configured yet. Install one from the registry (the button above), or add one to your config (freecode mcp add), and it shows here.') : null;
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
		const row = serverRow(s, tools);
		const buttons = h('div', { class: 'buttons' });
		for (const a of serverButtons) {
			if (canDo(a, s)) buttons.append(button(buttonWords[a] ?? actionWords[a].title.replace(/ Server$/, ''), () => this.actions.server(a, s)));
		}
		const facts = h('pre', { class: 'facts' }, row.tooltip);
		const parts: HTMLElement[] = [];
		if (tools.length > 0) {
			parts.push(this.details(`tools ${s.name}`, `Tools (${tools.length})`, h('ul', { class: 'tools' }, ...tools.map((t) => this.tool(t)))));
		}
		// Each resource or prompt: its row, what names it, and what opening it does.
		const groups: { group: string; title: string; items: { row: Row; key: string; open: () => void }[] }[] = [
			{
				group: 'resources',
				title: 'Resources',
				items: this.model.resourcesOf(s.name).map((r) => ({ row: resourceRow(r), key: r.uri, open: () => this.actions.readResource(s.name, r.uri) })),
			},
			{
				group: 'prompts',
				title: 'Prompts',
				items: this.model.promptsOf(s.name).map((pr) => ({ row: promptRow(pr), key: pr.name, open: () => this.actions.getPrompt(s.name, pr.name) })),
			},
		];
		for (const { group, title, items } of groups) {
			if (items.length === 0) continue;
			const list = h('ul', {}, ...items.map((it) => h('li', { title: it.row.tooltip, 'data-item': it.key }, button(it.row.label, it.open), ` ${it.row.description}`)));
			parts.push(this.details(`${group} ${s.name}`, `${title} (${items.length})`, list));
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
				row.label,
				h('span', { class: 'state' }, row.description),
				s.pid !== undefined ? h('span', { class: 'pid' }, `pid ${s.pid}`) : '',
			),
			s.lastError ? h('p', { class: 'error' }, printable(s.lastError)) : '',
			s.blocked ? h('p', { class: 'error blocked' }, printable(s.blocked)) : '',
			buttons,
			this.details(`facts ${s.name}`, 'Details', facts),
			...parts,
		);
	}

	private tool(t: ToolInfo): HTMLElement {
		const { label, tooltip, kind, review } = toolRow(t);
		return h(
			'li',
			{ class: 'tool', 'data-tool': t.id, title: tooltip },
			h('span', { class: 'name' }, label),
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
