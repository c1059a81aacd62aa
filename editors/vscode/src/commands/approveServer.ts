import * as vscode from 'vscode';
import { printable, truncate } from '../text';
import { commandLine } from '../views/serversTree';
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
	const st = fc.model.server(name);
	// What approving runs, as the sidecar reports it: the entry itself, not
	// what the project's file might say by the time the user reads it.
	const what = st?.command?.length
		? `It runs this command, chosen by the project's authors, with your user's rights:\n\n${truncate(commandLine(st.command), 2000)}\n\n`
		: st?.url
			? `It reaches this URL, chosen by the project's authors:\n\n${truncate(printable(st.url), 2000)}\n\n`
			: "It runs a command (or reaches a URL) chosen by the project's authors, with your user's rights. ";
	const ok = await vscode.window.showWarningMessage(
		`Run the MCP server "${printable(name)}" that this project ships?`,
		{
			modal: true,
			detail: what + 'Approve only servers of projects you trust; any change to the entry asks again.',
		},
		'Approve',
	);
	if (ok !== 'Approve') return;
	await serverAction(fc, { kind: 'server', name }, 'Approving', (s, n) => s.approve(n, true));
};
