// The page's modal questions and answers, each a <dialog>: the permission
// prompt (the extension's words and buttons, Deny the default: Enter,
// Escape and closing it deny), the form that runs a tool, a secret's
// password input, and a document (a result, a diff, a resource) to read.

import { answerFor, permissionPrompt, trustsFirst, type Prompt } from '../../frontend/src/permissionChoices';
import type { PermissionRequest, PermissionResponse, ToolInfo } from '../../frontend/src/protocol.gen';
import { secretValueProblem } from '../../frontend/src/secrets';
import { printable } from '../../frontend/src/text';
import { button, h } from './dom';
import { toolArguments, toolFields, type ToolField } from './toolForm';

/** The most of the arguments the prompt shows before "Show Full Arguments". */
const maxArgumentChars = 1200;

function open(d: HTMLDialogElement): void {
	document.body.append(d);
	d.showModal();
}

/**
 * askPermission shows the prompt and resolves with the answer; trust is
 * called first when the button picked trusts the project. A cancelled
 * request (the call ended) closes it, denying.
 */
export function askPermission(
	req: PermissionRequest,
	tool: ToolInfo | undefined,
	hasProject: boolean,
	trust: () => Promise<unknown>,
	cancelled: (fn: () => void) => void,
): Promise<PermissionResponse> {
	const prompt: Prompt = permissionPrompt(req, maxArgumentChars, tool?.destructive, hasProject);
	return new Promise((resolve) => {
		let picked: string | undefined;
		const detail = h('pre', { class: 'detail' }, prompt.detail);
		const row = h('div', { class: 'buttons' });
		const d = h('dialog', { class: 'permission', 'data-call': req.callId }, h('h2', {}, prompt.message), detail, row);
		for (const c of prompt.choices) {
			row.append(
				button(
					c.title,
					() => {
						if (!c.answer) {
							detail.textContent = `${prompt.detail}\n\nAll of the arguments:\n${prompt.fullArguments ?? ''}`;
							return;
						}
						picked = c.title;
						d.close();
					},
					{ class: c.answer?.decision === 'deny' ? 'deny' : c.answer ? 'allow' : 'more', autofocus: c.answer?.decision === 'deny' },
				),
			);
		}
		d.addEventListener('close', async () => {
			d.remove();
			const answer = answerFor(prompt, picked);
			if (answer === 'showFull') return resolve({ decision: 'deny' });
			if (trustsFirst(prompt, picked)) {
				try {
					await trust();
				} catch {
					return resolve({ decision: 'deny' });
				}
			}
			resolve(answer);
		});
		cancelled(() => {
			picked = undefined;
			if (d.open) d.close();
		});
		open(d);
	});
}

/** kindWords is what a field's hint says it takes. */
function kindWords(f: ToolField): string {
	if (f.kind === 'list') return `a list of ${f.items === 'string' ? 'text' : `${f.items}s`}, one a line`;
	if (f.kind === 'json') return 'JSON';
	if (f.kind === 'enum') return 'one of these';
	return f.kind;
}

function fieldInput(f: ToolField): HTMLElement {
	const id = `arg-${f.name}`;
	if (f.kind === 'boolean') {
		const s = h('select', { id, name: f.name });
		if (!f.required) s.append(h('option', { value: '' }, '(leave out)'));
		for (const v of ['false', 'true']) s.append(h('option', { value: v, selected: v === f.initial }, v));
		return s;
	}
	if (f.kind === 'enum') {
		const s = h('select', { id, name: f.name });
		if (!f.required) s.append(h('option', { value: '' }, '(leave out)'));
		(f.choices ?? []).forEach((v, i) => s.append(h('option', { value: v, selected: v === f.initial }, printable(f.labels?.[i] ?? v))));
		return s;
	}
	if (f.kind === 'list') {
		const t = h('textarea', { id, name: f.name, rows: '3', placeholder: f.required ? 'one a line' : 'one a line (empty: left out)' });
		t.value = f.initial;
		return t;
	}
	if (f.kind === 'json') {
		const shape = f.example ? `, e.g. ${f.example}` : '';
		const t = h('textarea', { id, name: f.name, rows: '3', placeholder: f.required ? `JSON${shape}` : `JSON${shape} (empty: left out)` });
		t.value = f.initial;
		return t;
	}
	const i = h('input', { id, name: f.name, type: f.kind === 'string' ? 'text' : 'number', step: f.kind === 'integer' ? '1' : 'any' });
	i.value = f.initial;
	return i;
}

/**
 * argumentsForm asks for the arguments of a schema (a tool's input schema,
 * a prompt's arguments as one); it resolves with them, or undefined when
 * the user cancels. verb is the button's word: Run, Get.
 */
export function argumentsForm(title: string, schema: unknown, verb: string): Promise<Record<string, unknown> | undefined> {
	const fields = toolFields(schema);
	return new Promise((resolve) => {
		const errors = h('p', { class: 'errors', role: 'alert' });
		const form = h('form', { method: 'dialog' });
		for (const f of fields) {
			const hint = [kindWords(f), f.required ? 'required' : 'optional', f.description && printable(f.description)].filter(Boolean).join(' · ');
			form.append(h('label', { for: `arg-${f.name}` }, printable(f.title ?? f.name), h('small', {}, hint)), fieldInput(f));
		}
		if (fields.length === 0) form.append(h('p', {}, 'There are no arguments to fill in.'));
		let result: Record<string, unknown> | undefined;
		const d = h(
			'dialog',
			{ class: 'run' },
			h('h2', {}, title),
			form,
			errors,
			h(
				'div',
				{ class: 'buttons' },
				button('Cancel', () => d.close()),
				button(
					verb,
					() => {
						const texts = new Map<string, string>();
						for (const f of fields) texts.set(f.name, (form.querySelector(`[name="${CSS.escape(f.name)}"]`) as HTMLInputElement).value);
						const got = toolArguments(fields, texts);
						if ('errors' in got) {
							errors.textContent = got.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
							return;
						}
						result = got.value;
						d.close();
					},
					{ class: 'allow' },
				),
			),
		);
		d.addEventListener('close', () => {
			d.remove();
			resolve(result);
		});
		open(d);
	});
}

/**
 * askSecret asks a secret's value in a password input, which the browser
 * neither shows nor fills nor keeps (autocomplete off); it resolves with
 * the value, or undefined when the user cancels (Cancel, Escape). The
 * input is emptied as the dialog goes.
 */
export function askSecret(title: string, prompt: string): Promise<string | undefined> {
	return new Promise((resolve) => {
		const errors = h('p', { class: 'errors', role: 'alert' });
		const input = h('input', {
			id: 'secret-value',
			name: 'secret',
			type: 'password',
			autocomplete: 'off',
			spellcheck: 'false',
			autocapitalize: 'off',
			autofocus: true,
			oninput: () => (errors.textContent = ''),
		});
		let result: string | undefined;
		const save = () => {
			const problem = secretValueProblem(input.value);
			if (problem) {
				errors.textContent = problem;
				return;
			}
			result = input.value;
			d.close();
		};
		// Enter in the input saves, as the Save button does.
		const form = h(
			'form',
			{
				method: 'dialog',
				onsubmit: (ev) => {
					ev.preventDefault();
					save();
				},
			},
			h('label', { for: 'secret-value' }, prompt),
			input,
		);
		const d = h(
			'dialog',
			{ class: 'secret' },
			h('h2', {}, title),
			form,
			errors,
			h('div', { class: 'buttons' }, button('Cancel', () => d.close()), button('Save', save, { class: 'allow' })),
		);
		d.addEventListener('close', () => {
			input.value = '';
			d.remove();
			resolve(result);
		});
		open(d);
	});
}

/** Choice is a button under a document: its label and what it does (then the dialog closes). */
export interface DocButton {
	label: string;
	run: () => void;
}

/** showDocument shows a text to read, with buttons under it (Close always). */
export function showDocument(title: string, text: string, buttons: DocButton[] = [], cls = ''): void {
	const row = h('div', { class: 'buttons' });
	const d = h('dialog', { class: `doc ${cls}`.trim() }, h('h2', {}, title), h('pre', {}, text), row);
	for (const b of buttons) {
		row.append(
			button(b.label, () => {
				d.close();
				b.run();
			}),
		);
	}
	row.append(button('Close', () => d.close()));
	d.addEventListener('close', () => d.remove());
	open(d);
}
