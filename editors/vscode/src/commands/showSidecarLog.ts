import type { CommandFactory } from './util';

/** showSidecarLog opens the sidecar's output channel (its stderr and the client's messages). */
export const showSidecarLog: CommandFactory = (fc) => () => fc.sidecar.output.show();
