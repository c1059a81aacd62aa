import * as vscode from 'vscode';
import { printable } from '../text';
import type { CommandFactory } from './util';
import { serverAction } from './serverAction';
import { serverName } from './util';

/**
 * approveServer lets a server this project ships run (freecode/servers/approve).
 * The approval is for this exact entry: the sidecar asks again if the
 * project changes its command, URL, env or headers.
 */
export const approveServer: CommandFactory = (fc) => async (node?: unknown) => {
	const name = await serverName(fc, node, 'Project server to approve');
	if (!name) return;
	const ok = await vscode.window.showWarningMessage(
		`Run the MCP server "${printable(name)}" that this project ships?`,
		{
			modal: true,
			detail:
				"It runs a command (or reaches a URL) chosen by the project's authors, with your user's rights. " +
				'Approve only servers of projects you trust; any change to the entry asks again. ' +
				'Open MCP Config or the project\'s .freecode/settings.json to read the entry first.',
		},
		'Approve',
	);
	if (ok !== 'Approve') return;
	await serverAction(fc, { kind: 'server', name }, 'Approving', (s, n) => s.approve(n, true));
};
