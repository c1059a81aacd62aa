// Text from a server, a project or the sidecar, made safe and short for the
// places VS Code shows it. Pure: no `vscode` import.

// C0 and C1 controls, DEL, and the bidi overrides and isolates that can make
// text read differently from what it is (a tool name that looks harmless).
const unsafe = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escape(c: string): string {
	const code = c.codePointAt(0)!;
	return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** printable escapes control and bidi characters; newlines and tabs stay. */
export function printable(s: string): string {
	return s.replace(unsafe, escape);
}

/** truncate cuts s to at most max characters, marking the cut with an ellipsis. */
export function truncate(s: string, max: number): string {
	if (s.length <= max) return s;
	return `${s.slice(0, Math.max(0, max - 1))}…`;
}

/** oneLine is s printable on one line (whitespace runs collapsed), at most max characters. */
export function oneLine(s: string, max: number): string {
	return truncate(printable(s.replace(/\s+/g, ' ').trim()), max);
}

/**
 * commandLine shows an argv as one line a person can read back: an argument
 * that is empty or holds whitespace, a quote or a backslash is
 * single-quoted, so the words stay apart. ${env:NAME} is FreeCode's, not a
 * shell's, and is shown as configured.
 */
export function commandLine(argv: readonly string[]): string {
	return argv
		.map((a) => (a === '' || /[\s'"\\]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a))
		.map(printable)
		.join(' ');
}
