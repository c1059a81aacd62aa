import { revokeConfirmation } from '../confirmations';
import type { CommandFactory } from './util';
import { serverAction } from './serverAction';

/** revokeServer withdraws a project server's approval, once confirmed; the sidecar stops it. */
export const revokeServer: CommandFactory = (fc) => (node?: unknown) =>
	serverAction(fc, node, 'revoke', 'Revoking', (s, name) => s.approve(name, false), revokeConfirmation);
