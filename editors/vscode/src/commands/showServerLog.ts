import type { CommandFactory } from './util';
import { serverName } from './util';

/** showServerLog opens a server's output channel. */
export const showServerLog: CommandFactory = (fc) => async (node?: unknown) => {
	const name = await serverName(fc, node, 'showLog');
	if (name) fc.logs.show(name, fc.model.server(name));
};
