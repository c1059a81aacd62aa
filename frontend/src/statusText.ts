// What the status bar item says, from the sidecar's state and the servers'
// summary. The extension's status.ts puts it on screen; the page's summary
// line is its tooltip's first line. Pure: no `vscode` import.

import type { Summary } from './model';

/** SidecarState is the extension's view of its sidecar process. */
export type SidecarState = 'starting' | 'running' | 'missing' | 'failed' | 'stopped';

/** StatusText is the item's content; background is a theme color id, or none. */
export interface StatusText {
	text: string;
	tooltip: string;
	background?: 'statusBarItem.warningBackground' | 'statusBarItem.errorBackground';
}

function list(names: string[]): string {
	return names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`;
}

/** statusText says connected of enabled servers, in warning colours when one failed or a config file has problems. */
export function statusText(sidecar: SidecarState, sum: Summary): StatusText {
	switch (sidecar) {
		case 'starting':
			return { text: '$(loading~spin) MCP', tooltip: "FreeCode: starting the sidecar…" };
		case 'missing':
			return {
				text: '$(error) MCP',
				tooltip: 'FreeCode: the sidecar (freecode-serve) was not found. Click to see why.',
				background: 'statusBarItem.errorBackground',
			};
		case 'failed':
			return {
				text: '$(error) MCP',
				tooltip: 'FreeCode: the sidecar stopped and was not restarted. Click to see why.',
				background: 'statusBarItem.errorBackground',
			};
		case 'stopped':
			return { text: '$(debug-stop) MCP', tooltip: 'FreeCode: the sidecar is stopped.' };
		case 'running':
			break;
	}
	if (sum.total === 0 && sum.configBroken) {
		return {
			text: '$(warning) MCP',
			tooltip: ['FreeCode: no MCP server loaded', ...sum.problemLines, 'Click for actions.'].join('\n'),
			background: 'statusBarItem.warningBackground',
		};
	}
	if (sum.total === 0) {
		return { text: '$(plug) MCP', tooltip: 'FreeCode: no MCP server configured. Click for actions.' };
	}
	// An idle server (started on demand) is as ready as a connected one:
	// its tools are registered and its first call starts it.
	const ready = sum.connected + sum.idle;
	const lines = [`FreeCode: ${sum.connected} of ${sum.enabled} enabled MCP servers connected`];
	lines.push(...sum.problemLines);
	if (sum.idle > 0) lines.push(`${sum.idle} idle: started on demand, at their first call`);
	if (sum.failed.length > 0) lines.push(`failed: ${list(sum.failed)}`);
	if (sum.needsSecret.length > 0) lines.push(`secret needed: ${list(sum.needsSecret)}`);
	if (sum.awaitingApproval.length > 0) lines.push(`awaiting approval: ${list(sum.awaitingApproval)}`);
	if (sum.needsAuth.length > 0) lines.push(`sign-in needed: ${list(sum.needsAuth)}`);
	if (sum.blocked.length > 0) lines.push(`blocked by your organization's policy: ${list(sum.blocked)}`);
	if (sum.busy > 0) lines.push(`${sum.busy} connecting`);
	const warn = sum.failed.length > 0 || sum.configBroken;
	const icon = warn ? '$(warning)' : sum.busy > 0 ? '$(sync~spin)' : '$(plug)';
	return {
		text: `${icon} MCP ${ready}/${sum.enabled}`,
		tooltip: lines.join('\n'),
		background: warn ? 'statusBarItem.warningBackground' : undefined,
	};
}
