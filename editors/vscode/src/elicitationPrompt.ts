// freecode/elicitation/request on screen. A form is a run of quick inputs,
// one per field (elicitationForm.ts decides what each says and checks what
// is entered): first who asks and why, with Decline; Escape at any step
// cancels. A URL is a modal that shows where the page is, opened only on
// Open. When the sidecar gives up (the call ended), the input on screen is
// taken down and the answer is cancel.

import * as vscode from 'vscode';
import {
	checkPicks,
	content,
	fieldText,
	introText,
	oneStep,
	parseForm,
	parseInput,
	pickItems,
	prefill,
	urlButtons,
	urlConsent,
	type FormField,
	type Parsed,
} from './elicitationForm';
import type { ElicitationRequest, ElicitationResponse } from '../../../frontend/src/protocol.gen';
import type { CancellationToken } from '../../../frontend/src/session';

const CANCEL: ElicitationResponse = { action: 'cancel' };
const DECLINE: ElicitationResponse = { action: 'decline' };

/** askElicitation asks the user and answers the sidecar; warn says why a request was declined unasked. */
export async function askElicitation(
	req: ElicitationRequest,
	token: CancellationToken,
	warn: (m: string) => void,
): Promise<ElicitationResponse> {
	return req.mode === 'url' ? askURL(req, token, warn) : askForm(req, token, warn);
}

async function askURL(req: ElicitationRequest, token: CancellationToken, warn: (m: string) => void): Promise<ElicitationResponse> {
	const c = urlConsent(req);
	if (c.refuse) {
		warn(`declined ${req.server}'s request to open ${JSON.stringify(req.url)}: ${c.refuse}`);
		return DECLINE;
	}
	const cancelled = whenCancelled(token);
	const picked = await Promise.race([
		vscode.window.showInformationMessage(c.message, { modal: true, detail: c.detail }, ...urlButtons.map((b) => ({ ...b }))),
		cancelled,
	]);
	if (token.isCancellationRequested || picked === undefined) return CANCEL;
	if (picked.choice !== 'open') return DECLINE;
	// The URL string as the server sent it: a Uri would re-encode its query.
	const opened = await vscode.env.openExternal(req.url as unknown as vscode.Uri);
	return opened ? { action: 'accept' } : CANCEL;
}

async function askForm(req: ElicitationRequest, token: CancellationToken, warn: (m: string) => void): Promise<ElicitationResponse> {
	const form = parseForm(req.requestedSchema);
	if (form.problems.length > 0) {
		warn(`declined ${req.server}'s form: ${form.problems.join('; ')}`);
		void vscode.window.showWarningMessage(
			`The MCP server ${req.server} asked for a form FreeCode cannot show (${form.problems[0]}); it was declined.`,
		);
		return DECLINE;
	}
	const one = oneStep(req, form);
	if (one) {
		const got = await pick(
			token,
			{ title: one.title, placeholder: one.placeholder },
			one.items.map((it) => ({ label: it.label, description: it.description, value: it })),
		);
		if (got === undefined) return CANCEL;
		const it = got[0];
		if (!it || it.decline) return DECLINE;
		const answers = new Map<string, unknown>([[form.fields[0].name, it.answer?.value]]);
		return { action: 'accept', content: content(answers) };
	}
	const intro = introText(req, form);
	const start = await pick(token, { title: intro.title, placeholder: intro.placeholder }, [
		{ label: intro.fill, value: 'fill' },
		{ label: 'Decline', value: 'decline' },
	]);
	if (start === undefined) return CANCEL;
	if (start[0] === 'decline') return DECLINE;
	const answers = new Map<string, unknown>();
	for (const [i, f] of form.fields.entries()) {
		const got = await askField(req, f, i, form.fields.length, token);
		if (got === undefined) return CANCEL;
		if ('value' in got) answers.set(f.name, got.value);
	}
	return { action: 'accept', content: content(answers) };
}

/** askField asks one field; undefined means the user cancelled (or the sidecar did). */
async function askField(req: ElicitationRequest, f: FormField, i: number, n: number, token: CancellationToken): Promise<Parsed | undefined> {
	const text = fieldText(req, f, i, n);
	if (f.kind === 'string' || f.kind === 'number' || f.kind === 'integer') {
		return input(token, { title: text.title, prompt: text.prompt, placeholder: text.placeholder, value: prefill(f) }, (s) =>
			parseInput(f, s),
		);
	}
	const items = pickItems(f);
	const many = f.kind === 'multiEnum';
	for (;;) {
		const values = await pick(token, { title: text.title, placeholder: `${text.prompt} ${text.placeholder}`.trim(), many }, items);
		if (values === undefined) return undefined;
		if (!many) return values[0] === undefined ? { leftOut: true } : { value: values[0] };
		const got = checkPicks(f, values);
		if (!('error' in got)) return got;
		// A multiple choice cannot refuse the Enter: say why and ask again.
		void vscode.window.showWarningMessage(got.error);
	}
}

function whenCancelled(token: CancellationToken): Promise<undefined> {
	return new Promise((resolve) => {
		if (token.isCancellationRequested) resolve(undefined);
		token.onCancellationRequested(() => resolve(undefined));
	});
}

/** input shows an input box until the entry parses or the user leaves; undefined for leaving. */
function input(
	token: CancellationToken,
	o: { title: string; prompt: string; placeholder: string; value: string },
	parse: (s: string) => Parsed,
): Promise<Parsed | undefined> {
	return new Promise((resolve) => {
		const box = vscode.window.createInputBox();
		Object.assign(box, { title: o.title, prompt: o.prompt, placeholder: o.placeholder, value: o.value, ignoreFocusOut: true });
		let done = false;
		const finish = (v: Parsed | undefined) => {
			if (done) return;
			done = true;
			resolve(v);
			box.dispose();
			sub.dispose();
		};
		const sub = token.onCancellationRequested(() => finish(undefined));
		box.onDidChangeValue((s) => {
			const p = parse(s);
			box.validationMessage = 'error' in p ? p.error : undefined;
		});
		box.onDidAccept(() => {
			const p = parse(box.value);
			if ('error' in p) box.validationMessage = p.error;
			else finish(p);
		});
		box.onDidHide(() => finish(undefined));
		box.show();
		if (token.isCancellationRequested) finish(undefined);
	});
}

interface Item<V> {
	label: string;
	description?: string;
	value: V;
	picked?: boolean;
}

/** pick shows a quick pick; it resolves with the values picked, undefined for leaving. */
function pick<V>(token: CancellationToken, o: { title: string; placeholder: string; many?: boolean }, items: Item<V>[]): Promise<V[] | undefined> {
	return new Promise((resolve) => {
		const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { value: V }>();
		const qitems = items.map((it) => ({ label: it.label, description: it.description, value: it.value }));
		Object.assign(qp, { title: o.title, placeholder: o.placeholder, canSelectMany: !!o.many, ignoreFocusOut: true, items: qitems });
		if (o.many) qp.selectedItems = qitems.filter((_, i) => items[i].picked);
		let done = false;
		const finish = (v: V[] | undefined) => {
			if (done) return;
			done = true;
			resolve(v);
			qp.dispose();
			sub.dispose();
		};
		const sub = token.onCancellationRequested(() => finish(undefined));
		qp.onDidAccept(() => {
			const chosen = o.many ? qp.selectedItems : qp.activeItems.slice(0, 1);
			if (!o.many && chosen.length === 0) return;
			finish(chosen.map((c) => c.value));
		});
		qp.onDidHide(() => finish(undefined));
		qp.show();
		if (token.isCancellationRequested) finish(undefined);
	});
}
