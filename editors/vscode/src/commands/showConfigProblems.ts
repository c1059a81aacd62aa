import * as vscode from 'vscode';
import type { NoticeNode } from '../nodes';
import type { CommandFactory } from './util';
import { openConfigDocument } from './openConfig';

/**
 * showConfigProblems opens the Problems panel and the file of the notice (or
 * the first file with problems) at its first problem, so the user lands on
 * the line to fix.
 */
export const showConfigProblems: CommandFactory = (fc) => async (node?: unknown) => {
	const n = node as NoticeNode | undefined;
	const first = fc.model.fileProblems()[0];
	const target =
		n?.kind === 'notice'
			? { path: n.path, line: n.line, column: n.column }
			: first
				? { path: first.path, line: first.problems[0]?.line ?? 1, column: first.problems[0]?.column ?? 1 }
				: undefined;
	await vscode.commands.executeCommand('workbench.actions.view.problems');
	if (!target) return;
	const pos = new vscode.Position(Math.max(0, target.line - 1), Math.max(0, target.column - 1));
	await openConfigDocument(vscode.Uri.file(target.path), new vscode.Range(pos, pos));
};
