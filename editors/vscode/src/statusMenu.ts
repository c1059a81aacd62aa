// The status bar item's menu (vscode-go's shape: a click opens a quick pick
// of what can be done now, not only a jump to the view): the fix for what
// is wrong first, then the everyday actions. status.ts shows it. Pure: no
// `vscode` import.

import type { Summary } from '../../../frontend/src/model';
import type { SidecarState } from '../../../frontend/src/statusText';

/** MenuItem is one row: a command to run with its arguments. */
export interface MenuItem {
	label: string;
	description?: string;
	command: string;
	args?: unknown[];
}

function names(list: string[]): string {
	return list.length <= 3 ? list.join(', ') : `${list.slice(0, 3).join(', ')} and ${list.length - 3} more`;
}

/** statusMenu lists the actions for the sidecar's state and the servers' summary. */
export function statusMenu(sidecar: SidecarState, sum: Summary): MenuItem[] {
	const items: MenuItem[] = [];
	if (sidecar === 'missing' || sidecar === 'failed' || sidecar === 'stopped') {
		items.push({ label: '$(output) Show Sidecar Log', description: 'why the sidecar is not running', command: 'freecode.showSidecarLog' });
		items.push({ label: '$(debug-restart) Restart Sidecar', command: 'freecode.restartSidecar' });
		if (sidecar === 'missing') {
			items.push({ label: '$(gear) Open Settings', description: 'freecode.serverPath', command: 'workbench.action.openSettings', args: ['freecode.serverPath'] });
		}
		return items;
	}
	if (sum.problems > 0) {
		items.push({ label: '$(warning) Show Config Problems', description: `${sum.problems} in the config`, command: 'freecode.showConfigProblems' });
	}
	if (sum.needsSecret.length > 0) {
		items.push({ label: '$(key) Set Secret…', description: `needed by ${names(sum.needsSecret)}`, command: 'freecode.server.setSecret' });
	}
	if (sum.failed.length > 0) {
		items.push({ label: '$(output) Show Server Log', description: `failed: ${names(sum.failed)}`, command: 'freecode.server.showLog' });
		items.push({ label: '$(debug-restart) Restart Server', description: `failed: ${names(sum.failed)}`, command: 'freecode.server.restart' });
	}
	if (sum.awaitingApproval.length > 0) {
		items.push({ label: '$(shield) Approve Project Server', description: names(sum.awaitingApproval), command: 'freecode.server.approve' });
	}
	if (sum.needsAuth.length > 0) {
		items.push({ label: '$(key) Sign In to Server', description: names(sum.needsAuth), command: 'freecode.server.signIn' });
	}
	items.push({ label: '$(list-tree) Show MCP Servers', command: 'freecode.servers.focus' });
	if (sum.total > 0 && sidecar === 'running') items.push({ label: '$(play) Run Tool…', command: 'freecode.runTool' });
	items.push({ label: '$(add) Add MCP Server…', command: 'freecode.addServer' });
	items.push({ label: '$(cloud-download) Import MCP Servers…', command: 'freecode.importServers' });
	items.push({ label: '$(go-to-file) Open MCP Config', command: 'freecode.openConfig' });
	if (sum.total > 0) items.push({ label: '$(output) Show Server Log', command: 'freecode.server.showLog' });
	items.push({ label: '$(output) Show Sidecar Log', command: 'freecode.showSidecarLog' });
	// One row per command: a failed server's row above already offers it.
	const seen = new Set<string>();
	return items.filter((i) => {
		const key = `${i.command} ${JSON.stringify(i.args ?? [])}`;
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
}
