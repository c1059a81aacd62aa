// freecode/sampling/request on screen and, once the user allows it, run on
// one of VS Code's language models (vscode.lm: the models other extensions,
// such as GitHub Copilot, provide). samplingConsent.ts words the dialog and
// shapes the messages. The extension has no model of its own: with none
// available the request is refused, and the user told why. Every refusal is
// a JSON-RPC error with MCP's code for a rejected sampling request (-1),
// which the sidecar passes to the server as it is.

import * as vscode from 'vscode';
import { ResponseError } from 'vscode-languageclient/node';
import type { SamplingRequest, SamplingResult } from '../../../frontend/src/protocol.gen';
import type { ReadOnlyDocs } from './readOnlyDocs';
import { chatMessages, consent, pickModel, readParams, samplingButtons } from './samplingConsent';
import type { CancellationToken } from '../../../frontend/src/session';

/** MCP's code for a sampling request the user rejected. */
const REJECTED = -1;

function refuse(why: string): ResponseError<void> {
	return new ResponseError(REJECTED, `sampling refused: ${why}`);
}

/** askSampling shows the request, and runs it on a language model if the user allows it; it throws a ResponseError otherwise. */
export async function askSampling(
	req: SamplingRequest,
	token: CancellationToken,
	docs: ReadOnlyDocs,
	messageChars: number,
): Promise<SamplingResult> {
	const read = readParams(req.params);
	if ('error' in read) throw new ResponseError(-32602, `sampling request not understood: ${read.error}`);
	const p = read.params;
	// Listing the models sends nothing anywhere.
	const models = typeof vscode.lm?.selectChatModels === 'function' ? await vscode.lm.selectChatModels() : [];
	const model = pickModel(models, p.modelPreferences);
	if (!model) {
		void vscode.window.showWarningMessage(
			`The MCP server ${req.server} asked for a completion, and VS Code has no language model for FreeCode to use (a chat extension, such as GitHub Copilot, provides them). It was refused.`,
		);
		throw refuse('VS Code has no language model available to FreeCode');
	}
	const msgs = chatMessages(p);
	if ('error' in msgs) throw refuse(msgs.error);

	const c = consent(req, p, model, messageChars);
	const cancelled = new Promise<undefined>((resolve) => {
		if (token.isCancellationRequested) resolve(undefined);
		token.onCancellationRequested(() => resolve(undefined));
	});
	for (;;) {
		const picked = await Promise.race([
			vscode.window.showWarningMessage(c.message, { modal: true, detail: c.detail }, ...samplingButtons.map((b) => ({ ...b }))),
			cancelled,
		]);
		if (token.isCancellationRequested) throw refuse('the call that asked ended');
		if (picked?.choice === 'showFull') {
			await docs.show(`sampling/${req.callId ?? req.server}.md`, c.full, { preview: true });
			continue;
		}
		if (picked?.choice !== 'allow') throw refuse('the user denied it');
		break;
	}

	const cts = new vscode.CancellationTokenSource();
	const sub = token.onCancellationRequested(() => cts.cancel());
	try {
		const messages = msgs.messages.map((m) =>
			m.role === 'user' ? vscode.LanguageModelChatMessage.User(m.text) : vscode.LanguageModelChatMessage.Assistant(m.text),
		);
		const resp = await model.sendRequest(messages, { justification: `The MCP server ${req.server} asked for a completion, and you allowed it.` }, cts.token);
		let text = '';
		for await (const part of resp.text) text += part;
		return { role: 'assistant', content: { type: 'text', text }, model: model.id, stopReason: 'endTurn' };
	} catch (e) {
		if (e instanceof ResponseError) throw e;
		throw refuse(`the language model failed: ${(e as Error).message}`);
	} finally {
		sub.dispose();
		cts.dispose();
	}
}
