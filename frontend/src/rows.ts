// What a row of the servers list says, in words, for any frontend: a
// server's state, facts and tooltip, a tool's kind and marks, a resource's
// and a prompt's title. The extension's tree (views/serversTree.ts,
// views/extrasTree.ts) adds its icons and the words its menus match on; the
// page lays the same words out in its own markup. What a server sent is
// made printable here, once.

import { hasTools, toolKind } from './model';
import type { PromptInfo, RegistryIdentity, ResourceInfo, ServerState, ServerStatus, ToolInfo } from './protocol.gen';
import { needsSecretRowWords, needsSecretTip } from './secrets';
import { commandLine, oneLine, printable } from './text';
import { since } from './wording';

/** Row is what a row says: its label, a line beside it, and everything in its tooltip. */
export interface Row {
	label: string;
	description: string;
	tooltip: string;
}

/** stateWords is how a row says a server's state. */
export const stateWords: Record<ServerState, string> = {
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
	blocked: 'blocked by policy',
};

/** The longest error text a description shows; the tooltip has all of it. */
const descriptionErrorChars = 80;

function plural(n: number, one: string, many: string): string {
	return `${n} ${n === 1 ? one : many}`;
}

/** serverRow says what a server's row says: state words, sandbox, tool count, what awaits review, scope. */
export function serverRow(s: ServerStatus, tools: readonly ToolInfo[], now = Date.now()): Row {
	const parts: string[] = [];
	const secret = needsSecretRowWords(s);
	if (secret) {
		// What the user can do about it, not the error's words.
		parts.push(secret);
	} else if (s.state === 'failed' && s.lastError) {
		parts.push(`failed: ${oneLine(s.lastError, descriptionErrorChars)}`);
	} else if (s.state === 'blocked' && s.blocked) {
		// Which entry of which file: the reason without its first words.
		parts.push(`blocked by policy: ${oneLine(s.blocked.replace(/^blocked by your organization's policy: /, ''), descriptionErrorChars)}`);
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
	if (s.scope === 'managed') parts.push("organization's");
	return { label: printable(s.name), description: parts.join(' · '), tooltip: serverTooltip(s, now) };
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

/** publicRegistry is the MCP Registry's own URL, which the tooltip does not repeat. */
const publicRegistry = 'https://registry.modelcontextprotocol.io';

/** registryTip is the tooltip's line on the MCP Registry server an entry was installed from, and which registry when not the public one. */
function registryTip(r: RegistryIdentity): string {
	const at = r.url.replace(/\/+$/, '') === publicRegistry ? '' : ` (${printable(r.url)})`;
	return `from the MCP Registry: ${printable(r.name)}@${printable(r.version)}${at}`;
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
	const from = { project: "from this project's settings", user: 'from your config', managed: "from your organization's managed settings" }[s.scope];
	lines.push(`${kind}, ${from}`);
	if (s.command && s.command.length > 0) lines.push(`command: ${commandLine(s.command)}`);
	if (s.url) lines.push(`url: ${printable(s.url)}`);
	if (s.registry) lines.push(registryTip(s.registry));
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
	if (s.state === 'blocked') lines.push(`${printable(s.blocked ?? "Blocked by your organization's policy.")} It does not run; \`freecode policy\` shows the whole policy.`);
	const secret = needsSecretTip(s);
	if (secret) lines.push(secret);
	if (s.lastError) lines.push(`last error: ${printable(s.lastError)}`);
	if (s.exitCode !== undefined) lines.push(`exit code: ${s.exitCode}`);
	if (s.retry) lines.push(retryWords(s.retry, now));
	if (s.stderrTail && s.stderrTail.length > 0) {
		lines.push('stderr:');
		for (const l of s.stderrTail.slice(-5)) lines.push(`  ${printable(l)}`);
	}
	return lines.join('\n');
}

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

/** ToolRow is what a tool's row says, with what it is made of: its kind and what of it awaits review. */
export interface ToolRow extends Row {
	kind: ReturnType<typeof toolKind>;
	/** Set while its definition awaits review: changed, or new on a pinned server. */
	review?: 'changed' | 'new';
}

/**
 * toolRow says what a tool's row says: its name, read-only or destructive,
 * and its description as tooltip; a tool whose definition awaits review
 * says so. A tool a rule allows always says so (allowedBy), and which rule
 * in which file; its calls ask anyway while its definition awaits review,
 * so the row then says only that.
 */
export function toolRow(t: ToolInfo): ToolRow {
	const kind = toolKind(t);
	const tip = [`${printable(t.id)} — ${kind}`];
	if (t.title) tip.push(printable(t.title));
	if (t.description) tip.push('', printable(t.description));
	if (t.alias) tip.push('', `sent to providers as ${printable(t.alias)}`);
	if (t.idempotent && !t.readOnly) tip.push('', 'Idempotent: a call whose answer was lost is sent once more.');
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
		label: printable(t.name),
		description: review === 'changed' ? `${kind} · definition changed` : review === 'new' ? `${kind} · new` : allowed ? `${kind} · ${allowed}` : kind,
		tooltip: tip.join('\n'),
		kind,
		review,
	};
}

/** resourceRow says what a resource's row says: its title or name, its type, and its URI in the tooltip. */
export function resourceRow(r: ResourceInfo): Row {
	const tip = [printable(r.title ?? r.name), printable(r.uri)];
	if (r.mimeType) tip.push(printable(r.mimeType));
	if (r.description) tip.push('', printable(r.description));
	return {
		label: printable(r.title ?? r.name),
		description: r.mimeType ? printable(r.mimeType) : oneLine(r.uri, 60),
		tooltip: tip.join('\n'),
	};
}

/** promptRow says what a prompt's row says: its title or name, and its arguments (required ones marked). */
export function promptRow(pr: PromptInfo): Row {
	const args = (pr.arguments ?? []).map((a) => (a.required ? `${a.name}*` : a.name));
	const tip = [printable(pr.title ?? pr.name)];
	if (pr.description) tip.push('', printable(pr.description));
	for (const a of pr.arguments ?? []) {
		tip.push(`${printable(a.name)}${a.required ? ' (required)' : ''}${a.description ? `: ${printable(a.description)}` : ''}`);
	}
	return {
		label: printable(pr.title ?? pr.name),
		description: args.length > 0 ? oneLine(args.join(', '), 60) : '',
		tooltip: tip.join('\n'),
	};
}
