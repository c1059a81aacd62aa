// The line above the servers when a config or settings file has problems:
// the sidecar keeps running what that file said last time it loaded, so the
// tree below may list servers the file no longer has, and the user must
// learn that where they look, not only in the Problems panel. statusText.ts
// says the same in the status bar. Pure: no `vscode` import.

import type { FileProblems, ServersModel } from '../model';
import type { NoticeNode } from '../nodes';
import type { ConfigProblem } from '../protocol';
import { oneLine, printable } from '../text';

function plural(n: number, one: string, many: string): string {
	return `${n} ${n === 1 ? one : many}`;
}

/** fileWords names a file as a user knows it: "the config", or a settings file by its name. */
export function fileWords(path: string): string {
	const base = path.split(/[\\/]/).pop() ?? path;
	if (/^settings(\.local)?\.json$/.test(base)) return base;
	return 'the config';
}

/** position is a problem's place as an editor shows it. */
export function position(p: ConfigProblem): string {
	return `line ${p.line ?? 1}, column ${p.column ?? 1}`;
}

/**
 * problemsHeadline says what is wrong and what runs meanwhile: with
 * servers, the last good state of the file; without, nothing from it yet.
 */
export function problemsHeadline(what: string, count: number, haveServers: boolean): string {
	const has = `${what.charAt(0).toUpperCase()}${what.slice(1)} has ${plural(count, 'problem', 'problems')}`;
	return haveServers ? `${has}; showing the last good one` : `${has}; fix it to load its servers`;
}

/** problemNode is the notice for one file with problems. */
export function problemNode(f: FileProblems, haveServers: boolean): NoticeNode {
	const first = f.problems[0];
	const lines = [problemsHeadline(fileWords(f.path), f.problems.length, haveServers), printable(f.path), ''];
	for (const p of f.problems) lines.push(`${position(p)}: ${p.key ? `${printable(p.key)}: ` : ''}${printable(p.message)}`);
	lines.push('', 'Click to go to the first one.');
	return {
		kind: 'notice',
		path: f.path,
		line: first?.line ?? 1,
		column: first?.column ?? 1,
		label: problemsHeadline(fileWords(f.path), f.problems.length, haveServers),
		description: first ? `${position(first)}: ${oneLine(first.message, 80)}` : '',
		tooltip: lines.join('\n'),
		icon: { id: 'warning', color: 'editorWarning.foreground' },
		contextValue: 'configProblems',
	};
}

/** problemNodes is a notice per file with problems, above the servers. */
export function problemNodes(model: ServersModel): NoticeNode[] {
	return model.fileProblems().map((f) => problemNode(f, model.size > 0));
}
