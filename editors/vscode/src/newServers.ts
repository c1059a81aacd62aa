// Which servers to tell the user about when they fail: one just added
// (it was not there when the sidecar's servers were first read) that fails
// before it ever connected. The user is waiting to see it work, and a row
// turning red in a view they may not look at is not enough. A server that
// connected once is no longer new; one that was there from the start is the
// status bar's to report. Pure: no `vscode` import.

import type { ServersModel } from '../../../frontend/src/model';
import { missingSecrets } from '../../../frontend/src/secrets';
import { oneLine, printable } from '../../../frontend/src/text';

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
			if (s.state === 'failed' || s.state === 'blocked') {
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

/**
 * stillFailing is those of names (update's, gathered over a moment) that
 * still fail or are blocked when the notice is to be made: one the user
 * fixed meanwhile (Set Secret… on its row, a Restart) is running now, and
 * a notice saying it "failed: no reason given" would be wrong.
 */
export function stillFailing(model: ServersModel, names: readonly string[]): string[] {
	return names.filter((n) => {
		const s = model.server(n);
		return s?.state === 'failed' || s?.state === 'blocked';
	});
}

/** SET_SECRET is the button of a notice about a server that misses a secret: Set Secret… on it (on several, its picker). */
export const SET_SECRET = 'Set Secret…';

/** FailedNotice is the one notification for new servers that just failed: its text, its buttons, the server they act on. */
export interface FailedNotice {
	text: string;
	buttons: string[];
	/** Set when the notice is about one server: what Show Log, Show Configuration and Set Secret… act on. */
	server?: string;
}

/** The longest reason a notice about several servers gives each. */
const reasonChars = 60;

/**
 * failedNotice says in one notification what became of the new servers
 * names (update's, gathered over a moment: an import adds several at once):
 * one server with its whole reason and its log; several in one line, each
 * with the start of its reason, and the servers view, rather than a toast
 * each covering the editor. A server whose entry names a secret that is not
 * set has nothing in its log: its fix, Set Secret…, is the button.
 */
export function failedNotice(model: ServersModel, names: readonly string[]): FailedNotice {
	// A missing secret's lastError repeats the server's name and ends with
	// the CLI's command; the notice names the secret and its button sets it.
	const needs = (name: string): string => {
		const s = model.server(name);
		const missing = s ? missingSecrets(s) : [];
		if (missing.length === 0) return '';
		return `needs the ${missing.length === 1 ? 'secret' : 'secrets'} ${missing.map(printable).join(', ')}`;
	};
	const why = (name: string): string => {
		const s = model.server(name);
		if (s?.state === 'blocked') return s.blocked ?? "blocked by your organization's policy";
		return needs(name) || (s?.lastError ?? 'no reason given');
	};
	if (names.length === 1) {
		const name = names[0];
		const s = model.server(name);
		if (needs(name)) return { text: `The MCP server ${name}, just added, ${needs(name)}.`, buttons: [SET_SECRET], server: name };
		const blocked = s?.state === 'blocked';
		return {
			text: blocked ? `The MCP server ${name}, just added, does not run: ${why(name)}` : `The MCP server ${name}, just added, failed: ${why(name)}`,
			buttons: blocked ? ['Show Configuration'] : ['Show Log', 'Show Configuration'],
			server: name,
		};
	}
	const shown = names.slice(0, 3).map((n) => `${n} (${oneLine(why(n), reasonChars)})`);
	const more = names.length > 3 ? ` and ${names.length - 3} more` : '';
	const secret = names.some((n) => needs(n) !== '');
	return { text: `${names.length} MCP servers just added did not start: ${shown.join('; ')}${more}`, buttons: secret ? [SET_SECRET, 'Show Servers'] : ['Show Servers'] };
}
