// FreeCode's servers for VS Code's own chat (agent mode, any chat
// participant): one MCP server, `freecode mcp serve --stdio`, FreeCode's
// governed gateway, with the same servers, permission rules, pinned
// definitions, approvals and on-demand start as FreeCode's own chat. What
// it runs is decided here; vscodeChat.ts registers it. Pure: no `vscode`
// import.

import { cliArgs, type Settings } from './settings';

/** The provider id, as package.json's contributes.mcpServerDefinitionProviders has it. */
export const GATEWAY_PROVIDER = 'freecode.gateway';

/** GatewayDefinition is the stdio server VS Code starts. */
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
 * gatewayDefinition is the gateway for VS Code's chat, or none when the
 * user turned it off (freecode.vscodeChat.enabled).
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
