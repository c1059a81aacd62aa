// One output channel per MCP server ("FreeCode: <name>"), created the first
// time that server logs something (freecode/servers/log) or the user asks
// for its log, so a user with twenty quiet servers gets no twenty channels.

import * as vscode from 'vscode';
import type { ServerLog, ServerStatus } from '../../../frontend/src/protocol.gen';
import { printable } from '../../../frontend/src/text';

export class ServerLogs implements vscode.Disposable {
	private readonly channels = new Map<string, vscode.LogOutputChannel>();

	private channel(name: string): { ch: vscode.LogOutputChannel; created: boolean } {
		const have = this.channels.get(name);
		if (have) return { ch: have, created: false };
		const ch = vscode.window.createOutputChannel(`FreeCode: ${printable(name)}`, { log: true });
		this.channels.set(name, ch);
		return { ch, created: true };
	}

	/** append writes one freecode/servers/log line to its server's channel. */
	append(log: ServerLog): void {
		const { ch } = this.channel(log.name);
		const line = `[${log.source}] ${printable(log.message)}`;
		switch (log.level) {
			case 'debug':
				ch.debug(line);
				break;
			case 'info':
				ch.info(line);
				break;
			case 'warning':
				ch.warn(line);
				break;
			case 'error':
				ch.error(line);
				break;
		}
	}

	/**
	 * show opens a server's channel. A channel opened before the server
	 * logged anything starts with the stderr tail its status carries, so it
	 * is not empty when there is something to see.
	 */
	show(name: string, status?: ServerStatus): void {
		const { ch, created } = this.channel(name);
		if (created) {
			const tail = status?.stderrTail ?? [];
			if (tail.length > 0) {
				ch.info(`last ${tail.length} stderr lines before this channel opened:`);
				for (const l of tail) ch.info(`[stderr] ${printable(l)}`);
			} else {
				ch.info(`no log lines from ${printable(name)} yet; its stderr and MCP log messages appear here`);
			}
			if (status?.lastError) ch.error(`last error: ${printable(status.lastError)}`);
		}
		ch.show(true);
	}

	dispose(): void {
		for (const ch of this.channels.values()) ch.dispose();
		this.channels.clear();
	}
}
