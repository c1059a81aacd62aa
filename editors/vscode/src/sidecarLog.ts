// The sidecar's stderr lines for its output channel: a log channel adds its
// own timestamp and level, so each line loses the sidecar's time and keeps
// its level, rather than showing two timestamps under an [error] tag.
// Lines come as log/slog's text handler writes them (time=… level=INFO
// msg="…" k=v) or as the sidecar's plain format (INFO message k=v); anything
// else (a panic's stack) is shown as it is, at the level of the line before.
// Pure: no `vscode` import.

export type ChannelLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface LogLine {
	level: ChannelLevel;
	text: string;
}

const levels: Record<string, ChannelLevel> = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', WARNING: 'warn', ERROR: 'error' };

/** unquote reads a Go-quoted string value ("…" with \" and \\ escapes). */
function unquote(q: string): string {
	try {
		return JSON.parse(q) as string;
	} catch {
		return q.slice(1, -1);
	}
}

/** A key=value pair's value: a quoted string or a run without spaces. */
const value = String.raw`("(?:[^"\\]|\\.)*"|\S*)`;
const slogText = new RegExp(String.raw`^time=\S+\s+level=([A-Z]+)(?:[+-]\d+)?\s+msg=${value}\s*(.*)$`);
const plain = /^(DEBUG|INFO|WARN|ERROR)(?:[+-]\d+)?\s(.*)$/;

/** parseLine reads one stderr line; previous is the level of the line before, for lines that have none. */
export function parseLine(line: string, previous: ChannelLevel = 'info'): LogLine {
	const s = slogText.exec(line);
	if (s) {
		const msg = s[2].startsWith('"') ? unquote(s[2]) : s[2];
		return { level: levels[s[1]] ?? 'info', text: s[3] ? `${msg} ${s[3]}` : msg };
	}
	const p = plain.exec(line);
	if (p) return { level: levels[p[1]], text: p[2] };
	if (/^(panic|fatal error):/.test(line)) return { level: 'error', text: line };
	return { level: previous, text: line };
}
