// Which servers to tell the user about when they fail: one just added
// (it was not there when the sidecar's servers were first read) that fails
// before it ever connected. The user is waiting to see it work, and a row
// turning red in a view they may not look at is not enough. A server that
// connected once is no longer new; one that was there from the start is the
// status bar's to report. Pure: no `vscode` import.

import type { ServersModel } from '../../../frontend/src/model';

export class NewServers {
	private baseline: Set<string> | undefined;
	/** Added servers that have not connected nor been told about yet. */
	private readonly pending = new Set<string>();

	/** update reads the model after a change and returns the new servers that just failed, each once. */
	update(model: ServersModel): string[] {
		if (!model.loaded) {
			this.baseline = undefined;
			this.pending.clear();
			return [];
		}
		const servers = model.servers();
		if (!this.baseline) {
			this.baseline = new Set(servers.map((s) => s.name));
			return [];
		}
		const failed: string[] = [];
		const now = new Set<string>();
		for (const s of servers) {
			now.add(s.name);
			if (!this.baseline.has(s.name)) {
				this.baseline.add(s.name);
				this.pending.add(s.name);
			}
			if (!this.pending.has(s.name)) continue;
			if (s.state === 'failed') {
				failed.push(s.name);
				this.pending.delete(s.name);
			} else if (s.state === 'connected' || s.state === 'idle' || s.state === 'disabled') {
				this.pending.delete(s.name);
			}
		}
		// A server removed is forgotten: added again, it is new again.
		for (const name of [...this.baseline]) {
			if (!now.has(name)) {
				this.baseline.delete(name);
				this.pending.delete(name);
			}
		}
		return failed;
	}
}
