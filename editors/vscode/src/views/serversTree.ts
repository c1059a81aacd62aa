// The MCP Servers tree's nodes for servers and their tools: what a node
// says (state icon and words, tool count, scope, the tooltip with
// everything the status holds) and the context values the menus match.
// serversView.ts turns the nodes into VS Code TreeItems; views/tree.ts puts
// them together with extrasTree.ts's groups. Pure: no `vscode` import, so
// the headless tests check every word.

import { hasTools, toolKind, type ServersModel } from '../model';
import { canDo, type ServerAction } from '../serverActions';
import type { Icon, ServerNode, ToolNode } from '../nodes';
import type { ServerState, ServerStatus, ToolInfo } from '../../../../frontend/src/protocol.gen';
import { commandLine, oneLine, printable } from '../text';
import { since } from '../wording';

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

function plural(n: number, one: string, many: string): string {
	return `${n} ${n === 1 ? one : many}`;
}

const menuActions: ServerAction[] = ['start', 'stop', 'restart', 'enable', 'disable', 'remove'];

/** serverNode describes one server: state icon and words, tool count, scope. */
export function serverNode(s: ServerStatus, tools: readonly ToolInfo[], now = Date.now()): ServerNode {
	const parts: string[] = [];
	if (s.state === 'failed' && s.lastError) {
		parts.push(`failed: ${oneLine(s.lastError, descriptionErrorChars)}`);
	} else if ((s.state === 'connecting' || s.state === 'reconnecting') && s.retry) {
		// Between tries: what went wrong, and when the next one comes.
		parts.push(`${retryWords(s.retry, now)}${s.lastError ? `: ${oneLine(s.lastError, descriptionErrorChars)}` : ''}`);
	} else if (s.state === 'connecting' && s.lastError) {
		// What the start waits on, as the sidecar tells it (a runner its
		// sandbox keeps from its registry, say).
		parts.push(`${stateWords[s.state]} ${oneLine(s.lastError, descriptionErrorChars)}`);
	} else {
		parts.push(stateWords[s.state]);
	}
	const sandbox = sandboxWords(s);
	if (sandbox) parts.push(sandbox);
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
		// What the menus offer: serverActions.ts decides, the when clauses match.
		...menuActions.filter((a) => canDo(a, s)).map((a) => `can:${a}`),
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

/**
 * sandboxWords is the row's word for a local server's sandbox: "sandboxed",
 * with "no network" where it has none; from the status of a started server,
 * else from what approving one would run. "" for a server not sandboxed.
 */
export function sandboxWords(s: ServerStatus): string {
	const line = s.sandbox ?? s.approval?.sandbox;
	if (!line || !line.startsWith('sandboxed')) return '';
	return /; no network(;|$)/.test(line) ? 'sandboxed, no network' : 'sandboxed';
}

/** retryWords is "retrying 2/6 in 4 s", from when the status was read. */
export function retryWords(r: { attempt: number; max: number; nextAt: string }, now: number): string {
	const at = Date.parse(r.nextAt);
	const secs = Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
	return `retrying ${r.attempt}/${r.max}${secs !== undefined && secs > 0 ? ` in ${secs} s` : ''}`;
}

/** serverTooltip is everything the status says, one fact a line, with what the server sent made printable. */
export function serverTooltip(s: ServerStatus, now = Date.now()): string {
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
	if (s.sandbox) lines.push(printable(s.sandbox));
	if (s.connectedAt) lines.push(`connected since ${printable(since(s.connectedAt, now))}`);
	if (s.lastPingMs !== undefined) lines.push(`last ping: ${s.lastPingMs} ms`);
	if (s.state === 'awaitingApproval') lines.push('This project ships this server; it runs once you approve it.');
	if (s.state === 'needsAuth') lines.push('The server needs you to sign in.');
	if (s.state === 'idle') lines.push('Started on demand: the first call of one of its tools starts it.');
	if (s.lastError) lines.push(`last error: ${printable(s.lastError)}`);
	if (s.exitCode !== undefined) lines.push(`exit code: ${s.exitCode}`);
	if (s.retry) lines.push(retryWords(s.retry, now));
	if (s.stderrTail && s.stderrTail.length > 0) {
		lines.push('stderr:');
		for (const l of s.stderrTail.slice(-5)) lines.push(`  ${printable(l)}`);
	}
	return lines.join('\n');
}

const toolIcons: Record<ReturnType<typeof toolKind>, Icon> = {
	'read-only': { id: 'eye' },
	writes: { id: 'edit' },
	destructive: { id: 'warning', color: 'editorWarning.foreground' },
};

const reviewIcon: Icon = { id: 'diff', color: 'editorWarning.foreground' };

/**
 * allowedWords is how a row says that a rule lets a tool run unasked:
 * "always allowed" for a rule of a file, "allowed this session" for an
 * "always allow" answer that only the session holds; "" for none.
 */
export function allowedWords(t: ToolInfo): string {
	if (!t.allowedBy) return '';
	return t.allowedBy.source === 'session' ? 'allowed this session' : 'always allowed';
}

/** allowedTip is the tooltip's line on the rule that lets a tool run unasked. */
function allowedTip(t: ToolInfo): string {
	const a = t.allowedBy!;
	const rule = `the allow rule "${printable(a.rule)}"`;
	const where = a.source === 'session' ? 'for this session (an "always allow" answer)' : `in ${printable(a.path ?? `the ${a.source} settings`)}`;
	return `Always allowed: ${rule} ${where} lets every call of it run without asking, a model's or an MCP App's.`;
}

/**
 * toolNode describes one tool: its name, read-only or destructive, and its
 * description as tooltip; a tool whose definition awaits review says so,
 * and its context value carries review:changed or review:new for the
 * Accept and Show Diff commands. A tool a rule allows always says so
 * (allowedBy), and which rule in which file; its calls ask anyway while its
 * definition awaits review, so the row then says only that.
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
	const allowed = allowedWords(t);
	if (allowed) tip.push('', allowedTip(t));
	return {
		kind: 'tool',
		id: t.id,
		server: t.server ?? '',
		name: t.name,
		label: printable(t.name),
		description: review === 'changed' ? `${k} · definition changed` : review === 'new' ? `${k} · new` : allowed ? `${k} · ${allowed}` : k,
		tooltip: tip.join('\n'),
		icon: review ? reviewIcon : toolIcons[k],
		contextValue: review ? `tool ${k} review:${review}` : `tool ${k}`,
	};
}

/** toolNodes is the tools under a server's node, by name. */
export function toolNodes(model: ServersModel, server: string): ToolNode[] {
	return model.toolsOf(server).map(toolNode);
}
