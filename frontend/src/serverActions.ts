// What can be done to a server in each state, in one place: the palette's
// server pickers offer only the servers an action applies to, and the view's
// menus (package.json's when clauses on the node's context value) say the
// same, which the extension's test/serverActions.test.ts checks; the page
// offers its buttons by it. Pure: no `vscode` import.

import type { ServerStatus } from './protocol.gen';
import { missingSecrets, needsSecretWords } from './secrets';
import { oneLine, printable } from './text';

/** ServerAction is one per-server command, by the last part of its id (freecode.server.<action>). */
export type ServerAction =
	| 'start'
	| 'stop'
	| 'restart'
	| 'showLog'
	| 'showConfiguration'
	| 'enable'
	| 'disable'
	| 'remove'
	| 'approve'
	| 'revoke'
	| 'signIn'
	| 'signOut'
	| 'setSecret';

interface ActionWords {
	/** The command's title, as the palette shows it after "FreeCode: ". */
	title: string;
	/** The picker's question. */
	placeHolder: string;
	/** What the picker says when no server fits. */
	none: string;
}

export const actionWords: Record<ServerAction, ActionWords> = {
	start: { title: 'Start Server', placeHolder: 'Start which server?', none: 'No server is stopped or failed.' },
	stop: { title: 'Stop Server', placeHolder: 'Stop which server?', none: 'No server is running.' },
	restart: { title: 'Restart Server', placeHolder: 'Restart which server?', none: 'No server can be restarted now.' },
	showLog: { title: 'Show Server Log', placeHolder: 'Show the log of which server?', none: 'No MCP server is configured.' },
	showConfiguration: {
		title: 'Show Server Configuration',
		placeHolder: 'Show the configuration of which server?',
		none: 'No MCP server is configured.',
	},
	enable: { title: 'Enable Server', placeHolder: 'Enable which server?', none: 'No server of your config is disabled.' },
	disable: { title: 'Disable Server', placeHolder: 'Disable which server?', none: 'No server of your config is enabled.' },
	remove: { title: 'Remove Server', placeHolder: 'Remove which server from your config?', none: 'Your config has no server.' },
	approve: { title: 'Approve Project Server', placeHolder: 'Approve which project server?', none: 'No project server awaits approval.' },
	revoke: { title: 'Revoke Project Server Approval', placeHolder: 'Revoke the approval of which server?', none: 'No project server is approved.' },
	signIn: { title: 'Sign In to Server', placeHolder: 'Sign in to which server?', none: 'No server needs a sign-in.' },
	signOut: { title: 'Sign Out of Server', placeHolder: 'Sign out of which server?', none: 'No remote server is configured.' },
	setSecret: { title: 'Set Secret…', placeHolder: 'Set the missing secrets of which server?', none: 'No server is waiting for a secret.' },
};

/**
 * canDo says whether action applies to a server as it is now. Enable,
 * Disable and Remove edit the user's config, so they are not offered for a
 * project's server (its entry is the repository's, in .freecode/settings.json).
 * Set Secret is for a server that failed because a ${secret:NAME} of its
 * entry is not set, in any scope: the secret is the user's, not the entry's.
 */
export function canDo(action: ServerAction, s: ServerStatus): boolean {
	const user = s.scope === 'user';
	switch (action) {
		case 'start':
			return s.state === 'stopped' || s.state === 'failed' || s.state === 'idle';
		case 'stop':
			return s.state === 'connected' || s.state === 'connecting' || s.state === 'reconnecting' || s.state === 'idle';
		case 'restart':
			return s.state === 'connected' || s.state === 'reconnecting' || s.state === 'failed' || s.state === 'stopped';
		case 'showLog':
		case 'showConfiguration':
			return true;
		case 'enable':
			return user && s.state === 'disabled';
		case 'disable':
			return user && s.state !== 'disabled';
		case 'remove':
			return user;
		case 'approve':
			return s.state === 'awaitingApproval';
		case 'revoke':
			return s.scope === 'project' && s.state !== 'awaitingApproval';
		case 'signIn':
			return s.state === 'needsAuth';
		case 'signOut':
			return s.type === 'remote';
		case 'setSecret':
			// Only what the sidecar named: it failed the server for exactly these.
			return missingSecrets(s).length > 0;
	}
}

/** ServerPick is one row of a server picker. */
export interface ServerPick {
	label: string;
	description: string;
	name: string;
}

/** serverPicks is the servers action applies to, for a quick pick, failed ones with why. */
export function serverPicks(servers: readonly ServerStatus[], action: ServerAction): ServerPick[] {
	return servers
		.filter((s) => canDo(action, s))
		.map((s) => ({
			label: printable(s.name),
			description: needsSecretWords(s) || (s.state === 'failed' && s.lastError ? `failed: ${oneLine(s.lastError, 60)}` : s.state),
			name: s.name,
		}));
}
