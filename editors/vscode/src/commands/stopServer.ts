import type { CommandFactory } from './util';
import { serverAction } from './serverAction';

/** stopServer disconnects a server until it is started again (freecode/servers/stop). */
export const stopServer: CommandFactory = (fc) => (node?: unknown) =>
	serverAction(fc, node, 'stop', 'Stopping', (s, name) => s.stop(name));
