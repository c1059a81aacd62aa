// Each server's log as this tab has seen it (freecode/servers/log from the
// moment it connected, after the stderr tail the status carried), kept to
// the last maxLines lines. Pure: no DOM.

import type { ServerLog } from '../../frontend/src/protocol.gen';
import { printable } from '../../frontend/src/text';

export const maxLines = 1000;

/** LogLine is one line as the log view shows it. */
export interface LogLine {
	time: string;
	level: string;
	source: string;
	text: string;
}

/** Logs holds the lines of every server, by name. */
export class Logs {
	private readonly lines = new Map<string, LogLine[]>();

	/** seed starts a server's log with its stderr tail, once, when this tab has no line of it yet. */
	seed(server: string, stderrTail: readonly string[] | undefined): void {
		if (this.lines.has(server) || !stderrTail || stderrTail.length === 0) return;
		this.lines.set(server, stderrTail.map((l) => ({ time: '', level: 'info', source: 'stderr', text: printable(l) })));
	}

	/** add appends one freecode/servers/log line and says whose log it is. */
	add(log: ServerLog): string {
		const have = this.lines.get(log.name) ?? [];
		const t = Date.parse(log.time);
		have.push({
			time: Number.isNaN(t) ? '' : new Date(t).toTimeString().slice(0, 8),
			level: log.level,
			source: log.source,
			text: printable(log.message),
		});
		if (have.length > maxLines) have.splice(0, have.length - maxLines);
		this.lines.set(log.name, have);
		return log.name;
	}

	of(server: string): readonly LogLine[] {
		return this.lines.get(server) ?? [];
	}

	forget(server: string): void {
		this.lines.delete(server);
	}
}
