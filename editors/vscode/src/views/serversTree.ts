// The MCP Servers tree's nodes for servers and their tools: the words of
// their rows (frontend/src/rows.ts, which the page shows too), with the
// state and kind icons and the context values the menus match. serversView.ts
// turns the nodes into VS Code TreeItems; views/tree.ts puts them together
// with extrasTree.ts's groups. Pure: no `vscode` import, so the headless
// tests check every word.

import type { ServersModel } from '../../../../frontend/src/model';
import type { ServerState, ServerStatus, ToolInfo } from '../../../../frontend/src/protocol.gen';
import { serverRow, toolRow, type ToolRow } from '../../../../frontend/src/rows';
import { missingSecrets } from '../../../../frontend/src/secrets';
import { canDo, type ServerAction } from '../../../../frontend/src/serverActions';
import type { Icon, ServerNode, ToolNode } from '../nodes';

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
	blocked: { id: 'lock', color: 'errorForeground' },
};

/** A server that misses a secret waits for the user, as one that needs a sign-in does: not an error of its own. */
const needsSecretIcon: Icon = { id: 'key', color: 'editorWarning.foreground' };

const menuActions: ServerAction[] = ['start', 'stop', 'restart', 'enable', 'disable', 'remove', 'setSecret'];

/** serverNode describes one server: its row's words, its state's icon, and what its menus offer. */
export function serverNode(s: ServerStatus, tools: readonly ToolInfo[], now = Date.now()): ServerNode {
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
		...serverRow(s, tools, now),
		icon: missingSecrets(s).length > 0 ? needsSecretIcon : stateIcons[s.state],
		contextValue: words.join(' '),
		expandable: tools.length > 0,
	};
}

const toolIcons: Record<ToolRow['kind'], Icon> = {
	'read-only': { id: 'eye' },
	writes: { id: 'edit' },
	destructive: { id: 'warning', color: 'editorWarning.foreground' },
};

const reviewIcon: Icon = { id: 'diff', color: 'editorWarning.foreground' };

/**
 * toolNode describes one tool: its row's words, its kind's icon; a tool
 * whose definition awaits review has the review's, and its context value
 * carries review:changed or review:new for the Accept and Show Diff
 * commands.
 */
export function toolNode(t: ToolInfo): ToolNode {
	const { label, description, tooltip, kind, review } = toolRow(t);
	return {
		kind: 'tool',
		id: t.id,
		server: t.server ?? '',
		name: t.name,
		label,
		description,
		tooltip,
		icon: review ? reviewIcon : toolIcons[kind],
		contextValue: review ? `tool ${kind} review:${review}` : `tool ${kind}`,
	};
}

/** toolNodes is the tools under a server's node, by name. */
export function toolNodes(model: ServersModel, server: string): ToolNode[] {
	return model.toolsOf(server).map(toolNode);
}
