// The line above the servers when a config or settings file has problems:
// the sidecar keeps running what that file said last time it loaded, so the
// tree below may list servers the file no longer has, and the user must
// learn that where they look, not only in the Problems panel. statusText.ts
// says the same in the status bar. Pure: no `vscode` import.

import { broken, headline, type FileProblems, type ServersModel } from '../../../../frontend/src/model';
import type { NoticeNode } from '../nodes';
import type { Problem } from '../../../../frontend/src/protocol.gen';
import { oneLine, printable } from '../../../../frontend/src/text';

/** position is a problem's place as an editor shows it. */
export function position(p: Problem): string {
	return `line ${p.line ?? 1}, column ${p.column ?? 1}`;
}

/**
 * problemNode is the notice for one file with problems. Its label is short
 * ("config.json: 1 problem") so a side bar of the usual width shows it
 * whole, and its description is where the first problem is and what it
 * says ("line 4, column 5: …"); the headline (what runs meanwhile), the
 * path and each problem with its place are the tooltip.
 */
export function problemNode(f: FileProblems, haveServers: boolean): NoticeNode {
	const first = f.problems[0];
	const title = headline(f, haveServers);
	const n = f.problems.length;
	const what = broken(f) ? (n === 1 ? 'problem' : 'problems') : n === 1 ? 'warning' : 'warnings';
	const base = f.path.split(/[\\/]/).pop() || f.path;
	const lines = [title, printable(f.path), ''];
	for (const p of f.problems) {
		const warn = p.severity === 'warning' ? ' (warning: ignored, the rest loads)' : '';
		lines.push(`${position(p)}: ${p.key ? `${printable(p.key)}: ` : ''}${printable(p.message)}${warn}`);
	}
	lines.push('', 'Click to go to the first one.');
	return {
		kind: 'notice',
		path: f.path,
		line: first?.line ?? 1,
		column: first?.column ?? 1,
		label: `${oneLine(base, 40)}: ${n} ${what}`,
		description: first ? `${position(first)}: ${oneLine(first.message, 80)}` : '',
		tooltip: lines.join('\n'),
		icon: broken(f) ? { id: 'warning', color: 'editorWarning.foreground' } : { id: 'info' },
		contextValue: 'configProblems',
	};
}

/** problemNodes is a notice per file with problems, above the servers. */
export function problemNodes(model: ServersModel): NoticeNode[] {
	return model.fileProblems().map((f) => problemNode(f, model.size > 0));
}
