import * as vscode from 'vscode';
import { type Format, FormatValues } from '../../../../frontend/src/protocol.gen';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/**
 * showToolDefinitions opens the exact tools array FreeCode sends a provider,
 * with its hash (freecode/tools/definitions): what a prompt cache keys on.
 */
export const showToolDefinitions: CommandFactory = (fc) => async () => {
	const s = session(fc);
	if (!s) return;
	const pick = await vscode.window.showQuickPick(
		FormatValues.map((f) => ({ label: f, format: f })),
		{ placeHolder: 'Provider format' },
	);
	if (!pick) return;
	const format: Format = pick.format;
	try {
		const d = await s.definitions(format);
		const content =
			`// Tool definitions sent to ${format} providers (${d.tools.length} tools)\n` +
			`// hash: ${d.hash}\n` +
			`${JSON.stringify(d.tools, null, 2)}\n`;
		await fc.docs.show(`definitions/${format}.jsonc`, content);
	} catch (e) {
		showError('Reading the tool definitions', e);
	}
};
