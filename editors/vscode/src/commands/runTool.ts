import * as vscode from 'vscode';
import { toolKind } from '../../../../frontend/src/model';
import type { Node } from '../nodes';
import { argumentsDocument, takesNoArguments } from '../../../../frontend/src/schemaPrefill';
import { printable } from '../../../../frontend/src/text';
import type { CommandFactory } from './util';
import { runAndShow } from './runToolWithArguments';
import { session } from './util';

/**
 * runTool is the manual way to try a server: pick a tool, get its required
 * arguments prefilled from its input schema in the arguments document to
 * edit, then run it with Run Tool with These Arguments. A tool that takes
 * no arguments runs at once.
 */
export const runTool: CommandFactory = (fc) => async (node?: unknown) => {
	if (!session(fc)) return;
	const n = node as Node | undefined;
	let id = n?.kind === 'tool' ? n.id : undefined;
	if (!id) {
		const tools = fc.model.allTools();
		if (tools.length === 0) {
			void vscode.window.showInformationMessage('No MCP tool is available: no server is connected.');
			return;
		}
		const pick = await vscode.window.showQuickPick(
			tools.map((t) => ({
				label: printable(t.id),
				description: toolKind(t),
				detail: printable(t.description),
				id: t.id,
			})),
			{ placeHolder: 'Tool to run', matchOnDescription: true, matchOnDetail: true },
		);
		id = pick?.id;
	}
	if (!id) return;
	const tool = fc.model.tool(id);
	if (!tool) {
		void vscode.window.showErrorMessage(`No tool ${printable(id)} (its server may have gone).`);
		return;
	}
	if (takesNoArguments(tool.inputSchema)) {
		await runAndShow(fc, tool.id, {});
		return;
	}
	await fc.toolRuns.openArguments(tool.id, argumentsDocument(tool.id, tool.inputSchema));
};
