import type { CommandFactory } from './util';
import { serverAction } from './serverAction';

/** signIn starts a remote server's sign-in (freecode/servers/login); the sidecar opens the browser through window/showDocument. */
export const signIn: CommandFactory = (fc) => (node?: unknown) =>
	serverAction(fc, node, 'signIn', 'Signing in to', (s, name) => s.login(name));
