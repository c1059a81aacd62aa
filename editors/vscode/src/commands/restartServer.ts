import type { CommandFactory } from './util';
import { serverAction } from './serverAction';

/** restartServer reconnects a server (freecode/servers/restart). */
export const restartServer: CommandFactory = (fc) => (node?: unknown) =>
	serverAction(fc, node, 'restart', 'Restarting', (s, name) => s.restart(name));
