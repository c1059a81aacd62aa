// Where a server's entry is in a config or settings file's text, for Show
// Configuration: the entry of the list shape ({ "name": "x", … } in
// mcp.servers) or of the map shape other clients use ("x": { … }). A
// textual search, not a parse: the file may not parse right now, and that is
// when a user most wants to see the entry. Pure: no `vscode` import.

/** Position is 0-based, as VS Code's. */
export interface Position {
	line: number;
	character: number;
}

function at(text: string, offset: number): Position {
	const before = text.slice(0, offset);
	const line = before.split('\n').length - 1;
	return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

function escapeRegExp(s: string): string {
	return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * entryPosition is where name's entry starts in text: its "name" member's
 * position, or its key in the map shape; undefined when neither is there.
 * A match inside a // comment line does not count.
 */
export function entryPosition(text: string, name: string): Position | undefined {
	const q = escapeRegExp(JSON.stringify(name));
	for (const re of [new RegExp(`"name"\\s*:\\s*${q}`, 'g'), new RegExp(`${q}\\s*:\\s*\\{`, 'g')]) {
		for (let m = re.exec(text); m; m = re.exec(text)) {
			const lineStart = text.lastIndexOf('\n', m.index) + 1;
			if (/^\s*\/\//.test(text.slice(lineStart, m.index))) continue;
			return at(text, m.index);
		}
	}
	return undefined;
}
