// FreeCode's servers for VS Code's own chat (agent mode, any chat
// participant), with the same servers, permission rules, pinned
// definitions, approvals and on-demand start as FreeCode's own chat. Where
// VS Code has McpHttpServerDefinition, they come from the sidecar the
// extension already runs (freecode/gateway/open): one HTTP definition per
// FreeCode server, so VS Code's picker groups the tools by server, each
// server's tools come as it connects, and no second copy of any server
// runs. Elsewhere one stdio server, `freecode mcp serve --stdio`, is the
// fallback: a second workspace, whose tools VS Code lists flat as
// mcp__<server>__<tool>. What is offered is decided here; vscodeChat.ts
// registers it. Pure: no `vscode` import.

import type { GatewayResult, ServerState } from '../../../frontend/src/protocol.gen';
import { cliArgs, type Settings } from './settings';

/** The provider id, as package.json's contributes.mcpServerDefinitionProviders has it. */
export const GATEWAY_PROVIDER = 'freecode.gateway';

/** GatewayDefinition is the stdio server VS Code starts: the fallback. */
export interface GatewayDefinition {
	label: string;
	command: string;
	args: string[];
	/** The project its rules and project servers come from: the first workspace folder. */
	project?: string;
	/** Changes when what it runs changes, so VS Code reads its tools again. */
	version: string;
}

/**
 * gatewayDefinition is the stdio gateway for VS Code's chat, or none when
 * the user turned it off (freecode.vscodeChat.enabled).
 */
export function gatewayDefinition(s: Settings, enabled: boolean, project: string | undefined, version: string): GatewayDefinition | undefined {
	if (!enabled) return undefined;
	const args = cliArgs(s, ['mcp', 'serve', '--stdio', ...(project ? ['--project', project] : [])]);
	return { label: 'FreeCode', command: s.cliPath, args, project, version: `${version}+${hash([s.cliPath, ...args].join('\0'))}` };
}

function hash(s: string): string {
	let h = 2166136261;
	for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
	return (h >>> 0).toString(16);
}

/** HttpDefinition is one FreeCode server as VS Code's chat gets it from the running sidecar. */
export interface HttpDefinition {
	/** The server's name: VS Code groups its tools under it. */
	label: string;
	uri: string;
	headers: Record<string, string>;
	/** Changes when the sidecar does (another port or token), so VS Code connects again. */
	version: string;
}

/** The states of a server whose tools cannot come without the user's doing; the sidecar offers no endpoint for them. */
const NO_TOOLS: ReadonlySet<ServerState> = new Set<ServerState>(['disabled', 'awaitingApproval', 'blocked', 'removed']);

/**
 * chatServers are the FreeCode servers VS Code's chat gets, sorted: those
 * freecode/gateway/open lists. When they change, the definitions are asked
 * for again.
 */
export function chatServers(servers: readonly { name: string; state: ServerState }[]): string[] {
	return servers
		.filter((s) => !NO_TOOLS.has(s.state))
		.map((s) => s.name)
		.sort();
}

/** httpDefinitions are the sidecar's endpoints as VS Code's definitions, one per server, each with the token. */
export function httpDefinitions(g: GatewayResult, version: string): HttpDefinition[] {
	return g.servers.map((s) => ({
		label: s.name,
		uri: s.url,
		headers: { Authorization: `Bearer ${g.token}` },
		version: `${version}+${hash(`${s.url}\0${g.token}`)}`,
	}));
}

/**
 * DefinitionChanges tells when VS Code must ask for the definitions again:
 * when the chat's servers change (one added, removed, enabled, approved)
 * or the sidecar restarted (another port and token). A server's tools
 * changing is not one: its endpoint says so itself (tools/list_changed).
 */
export class DefinitionChanges {
	private last: string | undefined;

	/** update reports whether servers, on the sidecar of that start, differ from those of the last update. */
	update(servers: readonly { name: string; state: ServerState }[], sidecar: number): boolean {
		const key = `${sidecar}\0${chatServers(servers).join('\0')}`;
		// The first is a change too: VS Code may have asked before the
		// sidecar ran, and was offered nothing.
		const changed = key !== this.last;
		this.last = key;
		return changed;
	}
}
