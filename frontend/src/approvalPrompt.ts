// The confirmation a user approves a project server by: everything the
// entry would be allowed (command or URL, cwd, env and headers as the
// repository wrote them, inheritEnv, TLS files, OAuth), and the buttons.
// The extension's commands/approveServer.ts shows it in a modal, the page
// in a dialog. Pure: no `vscode` import.

import type { DefinitionChange, ServerApproval, ServerStatus } from './protocol.gen';
import { commandLine, oneLine, printable, truncate } from './text';

export const NOT_NOW = 'Do Not Run';
export const APPROVE = 'Approve and Run';

/** ApprovalChoice is one button of the confirmation. */
export interface ApprovalChoice {
	title: string;
	approve: boolean;
}

/** ApprovalPrompt is what the modal shows, and the hash approving sends. */
export interface ApprovalPrompt {
	message: string;
	detail: string;
	/**
	 * In the order VS Code gets them: the first is what Enter picks, so it
	 * approves nothing; none is a close affordance, so Escape is VS Code's
	 * own Cancel, which approves nothing either.
	 */
	choices: ApprovalChoice[];
	entryHash: string;
}

/** The most of one value the modal shows; a longer one is cut, and says so. */
const maxValueChars = 1000;

function value(s: string): string {
	const p = printable(s);
	if (p.length <= maxValueChars) return p;
	return `${truncate(p, maxValueChars)} (${p.length - maxValueChars + 1} more characters, see .freecode/settings.json)`;
}

/** envRefs lists the NAMEs of the ${env:NAME} in values, sorted and once each. */
export function envRefs(values: readonly string[]): string[] {
	const names = new Set<string>();
	for (const v of values) for (const m of v.matchAll(/\$\{env:([^}]+)\}/g)) names.add(m[1]);
	return [...names].sort();
}

/**
 * approvalPrompt builds the confirmation for the project server st, or says
 * why there is none: a status without approval (a sidecar too old to send
 * it, or a server no longer awaiting approval) cannot be approved by hash.
 */
export function approvalPrompt(st: ServerStatus): ApprovalPrompt | { error: string } {
	const a = st.approval;
	if (st.state !== 'awaitingApproval') {
		return { error: `${oneLine(st.name, 80)} is not awaiting approval (it is ${st.state}).` };
	}
	if (!a) {
		return { error: `The sidecar did not say what approving ${oneLine(st.name, 80)} would allow, so it cannot be approved here; update FreeCode.` };
	}
	const lines = approvalLines(a);
	return {
		message: `Run the MCP server "${oneLine(st.name, 80)}" that this project ships?`,
		detail: [
			a.command?.length && !a.sandbox
				? "This project's .freecode/settings.json, written by its authors, asks for this, with your user's rights:"
				: "This project's .freecode/settings.json, written by its authors, asks for this:",
			'',
			// What it could do comes first: in its sandbox, or with all of the user's rights.
			...(a.sandbox ? [value(a.sandbox.charAt(0).toUpperCase() + a.sandbox.slice(1))] : []),
			...lines,
			'',
			'Approve only servers of projects you trust. This approves exactly this entry: any change to it asks again.',
		].join('\n'),
		choices: [
			{ title: NOT_NOW, approve: false },
			{ title: APPROVE, approve: true },
		],
		entryHash: a.entryHash,
	};
}

/** approvalLines is every field of the entry, one line each, as written. */
export function approvalLines(a: ServerApproval): string[] {
	const out: string[] = [];
	if (a.command?.length) out.push(`Command: ${value(commandLine(a.command))}`);
	if (a.cwd) out.push(`Working directory: ${value(a.cwd)}`);
	if (a.url) out.push(`URL: ${value(a.url)}`);
	if (a.transport) out.push(`Transport: ${value(a.transport)}`);
	if (a.inheritEnv) {
		out.push('⚠ inheritEnv: the server gets your whole environment, API keys and tokens included.');
	}
	const env = Object.entries(a.env ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
	if (env.length) {
		out.push('Environment variables, as written:');
		for (const [k, v] of env) out.push(`  ${value(k)}=${value(v)}`);
	}
	const headers = Object.entries(a.headers ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
	if (headers.length) {
		out.push('HTTP headers, as written:');
		for (const [k, v] of headers) out.push(`  ${value(k)}: ${value(v)}`);
	}
	if (a.caBundle) out.push(`CA bundle: ${value(a.caBundle)}`);
	if (a.clientCert) out.push(`Client certificate: ${value(a.clientCert)}`);
	if (a.clientKey) out.push(`Client key: ${value(a.clientKey)}`);
	const o = a.oauth;
	if (o) {
		out.push('OAuth:');
		if (o.clientId) out.push(`  clientId: ${value(o.clientId)}`);
		if (o.clientSecret) out.push(`  clientSecret: ${value(o.clientSecret)}`);
		if (o.clientMetadataUrl) out.push(`  clientMetadataUrl: ${value(o.clientMetadataUrl)}`);
		if (o.scopes?.length) out.push(`  scopes: ${value(o.scopes.join(' '))}`);
		if (o.callbackPort) out.push(`  callbackPort: ${o.callbackPort}`);
	}
	if (a.start) out.push('Started on demand: at the first call of one of its tools.');
	if (a.deferTools !== undefined) out.push(`Tools deferred (found with tool_search): ${a.deferTools}`);
	if (a.timeout) out.push(`Connect timeout: ${a.timeout} ms`);
	if (a.toolTimeout) out.push(`Tool call timeout: ${a.toolTimeout} ms`);
	if (a.idleTimeout) out.push(`Idle timeout: ${a.idleTimeout} ms`);
	if (a.maxMessageBytes) out.push(`Largest message: ${a.maxMessageBytes} bytes`);
	if (a.protocolVersion) out.push(`MCP version: ${value(a.protocolVersion)}`);
	// Where the sidecar expands ${env:NAME}: the variables it would send.
	const refs = envRefs([a.url ?? '', ...Object.values(a.env ?? {}), ...Object.values(a.headers ?? {}), o?.clientSecret ?? '']);
	if (refs.length) out.push(`It reads these variables of yours: ${refs.map(value).join(', ')}.`);
	// The hash ties the approval to the entry; its start is enough to tell two apart.
	out.push(`Entry: ${value(a.entryHash.slice(0, 12))}…`);
	const pending = a.pendingReviews ?? [];
	if (pending.length) {
		out.push(`Tool definitions that await your review, from when it last ran (they still ask after approval):`);
		for (const c of pending) out.push(`  ${changeSummary(c)}`);
	}
	return out;
}

/** changeSummary is one line saying which parts of a tool's definition changed. */
export function changeSummary(c: DefinitionChange): string {
	if (c.kind === 'new') return `${value(c.tool)}: new tool`;
	if (c.kind === 'removed') return `${value(c.tool)}: no longer listed`;
	const parts: string[] = [];
	if (c.title) parts.push('title');
	if (c.description) parts.push('description');
	if (c.inputSchema?.length) parts.push('input schema');
	if (c.outputSchema?.length) parts.push('output schema');
	for (const h of c.annotations ?? []) parts.push(h.hint);
	return `${value(c.tool)}: ${parts.length ? parts.join(', ') : 'definition'} changed`;
}

/** approvedHash maps the button picked (undefined: Escape or the dialog closed) to the hash to approve, if any. */
export function approvedHash(prompt: ApprovalPrompt, picked: string | undefined): string | undefined {
	const c = prompt.choices.find((x) => x.title === picked);
	return c?.approve ? prompt.entryHash : undefined;
}
