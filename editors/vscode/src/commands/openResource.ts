import * as vscode from 'vscode';
import { resourceDoc } from '../../../../frontend/src/extrasText';
import type { Node } from '../nodes';
import { printable } from '../../../../frontend/src/text';
import type { CommandFactory } from './util';
import { session, showError } from './util';

/** openResource reads a server's resource (freecode/resources/read) and opens it read-only. */
export const openResource: CommandFactory = (fc) => async (node?: unknown) => {
	const s = session(fc);
	if (!s) return;
	const n = node as Node | undefined;
	let target = n?.kind === 'resource' ? { server: n.server, uri: n.uri } : undefined;
	if (!target) {
		let all;
		try {
			all = await s.resources();
		} catch (e) {
			showError('Listing the resources', e);
			return;
		}
		if (all.length === 0) {
			void vscode.window.showInformationMessage('No connected MCP server offers a resource.');
			return;
		}
		const pick = await vscode.window.showQuickPick(
			all.map((r) => ({
				label: printable(r.title ?? r.name),
				description: printable(r.server),
				detail: printable(r.uri),
				server: r.server,
				uri: r.uri,
			})),
			{ placeHolder: 'Resource to open', matchOnDescription: true, matchOnDetail: true },
		);
		if (!pick) return;
		target = { server: pick.server, uri: pick.uri };
	}
	const { server, uri } = target;
	try {
		const r = await vscode.window.withProgress(
			{ location: { viewId: 'freecode.servers' }, title: `Reading ${uri}` },
			() => s.readResource(server, uri),
		);
		const doc = resourceDoc(server, uri, r);
		await fc.docs.show(doc.name, doc.content);
	} catch (e) {
		showError(`Reading ${printable(uri)} from ${printable(server)}`, e);
	}
};
