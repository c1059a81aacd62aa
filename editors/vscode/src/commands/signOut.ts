import { signOutConfirmation } from '../confirmations';
import type { CommandFactory } from './util';
import { serverAction } from './serverAction';

/**
 * signOut stops a remote server and forgets its sign-in (freecode/servers/logout),
 * once confirmed: its next start needs a sign-in.
 */
export const signOut: CommandFactory = (fc) => (node?: unknown) =>
	serverAction(fc, node, 'signOut', 'Signing out of', (s, name) => s.logout(name), signOutConfirmation);
