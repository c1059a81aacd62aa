import type { CommandFactory } from './util';
import { serverAction } from './serverAction';

/** startServer connects a stopped or failed server (freecode/servers/start). */
export const startServer: CommandFactory = (fc) => (node?: unknown) =>
	serverAction(fc, node, 'start', 'Starting', (s, name) => s.start(name));
