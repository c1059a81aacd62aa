import type { CommandFactory } from './util';

/** restartSidecar stops and starts freecode-serve, forgetting earlier crashes. */
export const restartSidecar: CommandFactory = (fc) => () => fc.sidecar.restart();
