// The form of an MCP elicitation (freecode/elicitation/request, form mode)
// as the extension asks it: the requested schema read into fields, what each
// quick input shows, and the checks on what the user enters. The schema is
// MCP's restricted one: a flat object whose properties are strings (maybe
// with a format, length bounds or an enum), numbers and integers (maybe
// bounded), booleans, and arrays of enum values (a multiple choice); each
// may have a title, a description and a default, and `required` lists the
// fields that must be answered. elicitationPrompt.ts puts it on screen.
//
// Pure: no `vscode` import.

import type { ElicitationRequest } from '../../../frontend/src/protocol.gen';
import { oneLine, printable } from '../../../frontend/src/text';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multiEnum';

/** An enum's choice: the value sent, and what the user reads. */
export interface Choice {
	value: string;
	label: string;
}

/** FormField is one property of the requested schema. */
export interface FormField {
	name: string;
	/** The title, else the name: what the user reads. */
	label: string;
	description?: string;
	kind: FieldKind;
	required: boolean;
	default?: unknown;
	/** enum and multiEnum: the choices, in the schema's order. */
	choices?: Choice[];
	format?: string;
	minimum?: number;
	maximum?: number;
	minLength?: number;
	maxLength?: number;
	minItems?: number;
	maxItems?: number;
}

/** Form is a requested schema read into fields; problems say what the extension cannot ask (it declines then). */
export interface Form {
	fields: FormField[];
	problems: string[];
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
	return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** choicesOf reads a single choice's values: enum (with the older enumNames), or oneOf/anyOf of { const, title }. */
function choicesOf(p: Obj): Choice[] | undefined {
	if (Array.isArray(p.enum)) {
		const names = Array.isArray(p.enumNames) ? p.enumNames : [];
		return p.enum
			.filter((v): v is string => typeof v === 'string')
			.map((v, i) => ({ value: v, label: typeof names[i] === 'string' ? (names[i] as string) : v }));
	}
	const alts = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : undefined;
	if (!alts) return undefined;
	const out: Choice[] = [];
	for (const a of alts) {
		if (!isObj(a) || typeof a.const !== 'string') return undefined;
		out.push({ value: a.const, label: typeof a.title === 'string' ? a.title : a.const });
	}
	return out;
}

/** parseForm reads an elicitation's requestedSchema. */
export function parseForm(schema: unknown): Form {
	const form: Form = { fields: [], problems: [] };
	if (schema === undefined) return form;
	if (!isObj(schema) || (schema.type !== undefined && schema.type !== 'object')) {
		form.problems.push('the requested schema is not an object schema');
		return form;
	}
	const props = isObj(schema.properties) ? schema.properties : {};
	const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
	for (const [name, p] of Object.entries(props)) {
		if (!isObj(p)) {
			form.problems.push(`${name}: not a schema`);
			continue;
		}
		const f: FormField = {
			name,
			label: typeof p.title === 'string' && p.title !== '' ? p.title : name,
			kind: 'string',
			required: required.has(name),
		};
		if (typeof p.description === 'string' && p.description !== '') f.description = p.description;
		if (p.default !== undefined) f.default = p.default;
		const choices = choicesOf(p);
		switch (p.type) {
			case 'string':
				if (choices) {
					f.kind = 'enum';
					f.choices = choices;
				}
				if (typeof p.format === 'string') f.format = p.format;
				f.minLength = num(p.minLength);
				f.maxLength = num(p.maxLength);
				break;
			case 'number':
			case 'integer':
				f.kind = p.type;
				f.minimum = num(p.minimum);
				f.maximum = num(p.maximum);
				break;
			case 'boolean':
				f.kind = 'boolean';
				break;
			case 'array': {
				const items = isObj(p.items) ? choicesOf(p.items) : undefined;
				if (!items) {
					form.problems.push(`${name}: a list whose items are not a choice of values`);
					continue;
				}
				f.kind = 'multiEnum';
				f.choices = items;
				f.minItems = num(p.minItems);
				f.maxItems = num(p.maxItems);
				break;
			}
			default:
				if (choices && p.type === undefined) {
					f.kind = 'enum';
					f.choices = choices;
					break;
				}
				form.problems.push(`${name}: a field of type ${JSON.stringify(p.type)}, which a form cannot ask`);
				continue;
		}
		// Undefined bounds are left out, so that fields compare plainly.
		for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems'] as const) {
			if (f[k] === undefined) delete f[k];
		}
		form.fields.push(f);
	}
	return form;
}

/** Parsed is what the user's text for a field comes to: a value, nothing (left out), or what is wrong with it. */
export type Parsed = { value: unknown } | { leftOut: true } | { error: string };

const emailRe = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const dateRe = /^\d{4}-\d{2}-\d{2}$/;
const dateTimeRe = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function formatError(format: string | undefined, s: string): string | undefined {
	switch (format) {
		case 'email':
			return emailRe.test(s) ? undefined : 'Enter an email address, like name@example.com.';
		case 'uri':
			try {
				const u = new URL(s);
				return u.protocol ? undefined : 'Enter a URL.';
			} catch {
				return 'Enter a full URL, like https://example.com/.';
			}
		case 'date':
			return dateRe.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ? undefined : 'Enter a date as YYYY-MM-DD.';
		case 'date-time':
			return dateTimeRe.test(s) && !Number.isNaN(Date.parse(s)) ? undefined : 'Enter a date and time, like 2026-05-01T10:00:00Z.';
	}
	return undefined;
}

/**
 * parseInput checks the text the user entered for a string, number or
 * integer field. Empty text leaves an optional field out; a required one
 * must be answered, unless it has a default (the sidecar fills it in).
 */
export function parseInput(f: FormField, text: string): Parsed {
	if (text === '') {
		if (f.required && f.default === undefined) return { error: `${f.label} is required.` };
		return { leftOut: true };
	}
	if (f.kind === 'number' || f.kind === 'integer') {
		const n = Number(text.trim());
		if (text.trim() === '' || !Number.isFinite(n)) return { error: 'Enter a number.' };
		if (f.kind === 'integer' && !Number.isInteger(n)) return { error: 'Enter a whole number.' };
		if (f.minimum !== undefined && n < f.minimum) return { error: `Enter at least ${f.minimum}.` };
		if (f.maximum !== undefined && n > f.maximum) return { error: `Enter at most ${f.maximum}.` };
		return { value: n };
	}
	const len = [...text].length;
	if (f.minLength !== undefined && len < f.minLength) return { error: `Enter at least ${f.minLength} characters.` };
	if (f.maxLength !== undefined && len > f.maxLength) return { error: `Enter at most ${f.maxLength} characters.` };
	const bad = formatError(f.format, text);
	return bad ? { error: bad } : { value: text };
}

/** prefill is what a text field's input starts with: its default. */
export function prefill(f: FormField): string {
	return typeof f.default === 'string' || typeof f.default === 'number' ? String(f.default) : '';
}

/** PickItem is one choice of a pick field. */
export interface PickItem {
	label: string;
	description?: string;
	/** The value sent; undefined leaves the field out. */
	value: unknown;
	picked?: boolean;
}

/** pickItems are the choices of a boolean, enum or multiEnum field, the default marked (and picked, for a multiple choice). */
export function pickItems(f: FormField): PickItem[] {
	const defaults = Array.isArray(f.default) ? f.default : [f.default];
	const item = (label: string, value: unknown, shown?: string): PickItem => {
		const isDefault = defaults.includes(value);
		const description = [shown, isDefault ? 'default' : undefined].filter((d) => d !== undefined).join(' · ');
		return {
			label,
			value,
			...(description ? { description } : {}),
			...(isDefault && f.kind === 'multiEnum' ? { picked: true } : {}),
		};
	};
	const items: PickItem[] =
		f.kind === 'boolean'
			? [item('Yes', true), item('No', false)]
			: (f.choices ?? []).map((c) => item(printable(c.label), c.value, c.label !== c.value ? printable(c.value) : undefined));
	if (!f.required && f.kind !== 'multiEnum') items.push({ label: 'Leave out', value: undefined });
	// The default first, so that Enter takes it.
	if (f.kind !== 'multiEnum') {
		const i = items.findIndex((it) => it.value !== undefined && defaults.includes(it.value));
		if (i > 0) items.unshift(...items.splice(i, 1));
	}
	return items;
}

/** checkPicks checks a multiple choice's count; an empty one leaves an optional field out. */
export function checkPicks(f: FormField, values: unknown[]): Parsed {
	if (values.length === 0 && !f.required) return { leftOut: true };
	if (values.length === 0 && f.default !== undefined) return { leftOut: true };
	const min = f.minItems ?? (f.required ? 1 : 0);
	if (values.length < min) return { error: `Pick at least ${min}.` };
	if (f.maxItems !== undefined && values.length > f.maxItems) return { error: `Pick at most ${f.maxItems}.` };
	return { value: values };
}

/** FieldText is what a field's quick input says. */
export interface FieldText {
	title: string;
	prompt: string;
	placeholder: string;
}

/** fieldText words the quick input of field i of n. */
export function fieldText(req: ElicitationRequest, f: FormField, i: number, n: number): FieldText {
	const what: string[] = [];
	if (f.description) what.push(oneLine(f.description, 200));
	const rules: string[] = [];
	if (f.required) rules.push('required');
	else rules.push('optional');
	if (f.format) rules.push(f.format);
	if (f.kind === 'integer') rules.push('a whole number');
	if (f.kind === 'number') rules.push('a number');
	if (f.minimum !== undefined) rules.push(`≥ ${f.minimum}`);
	if (f.maximum !== undefined) rules.push(`≤ ${f.maximum}`);
	if (f.default !== undefined) rules.push(`default ${JSON.stringify(f.default)}`);
	what.push(`(${rules.join(', ')})`);
	return {
		title: `${printable(req.server)} asks (${i + 1}/${n}): ${printable(f.label)}`,
		prompt: what.join(' '),
		placeholder: f.kind === 'multiEnum' ? 'Pick any that apply, then press Enter' : f.required ? '' : 'Leave empty to leave it out',
	};
}

/** introText words the first step: who asks, what for, and how many fields. */
export function introText(req: ElicitationRequest, form: Form): { title: string; placeholder: string; fill: string } {
	const n = form.fields.length;
	return {
		title: `The MCP server ${printable(req.server)} asks you`,
		placeholder: oneLine(req.message, 300),
		fill: n === 0 ? 'Answer' : `Fill in ${n === 1 ? 'one field' : `${n} fields`}`,
	};
}

/** OneStep is a question asked in one pick: its choices and Decline, side by side. */
export interface OneStep {
	title: string;
	placeholder: string;
	items: { label: string; description?: string; answer?: PickItem; decline?: true }[];
}

/**
 * oneStep is a form of one yes/no or single-choice field as one pick, the
 * server's message above its choices and Decline among them: asking first
 * whether to fill it in made a yes/no question two steps. Undefined for
 * any other form.
 */
export function oneStep(req: ElicitationRequest, form: Form): OneStep | undefined {
	const f = form.fields[0];
	if (form.fields.length !== 1 || (f.kind !== 'boolean' && f.kind !== 'enum')) return undefined;
	const intro = introText(req, form);
	return {
		title: `${intro.title}: ${printable(f.label)}`,
		placeholder: intro.placeholder,
		items: [...pickItems(f).map((answer) => ({ label: answer.label, description: answer.description, answer })), { label: 'Decline', description: 'send no answer', decline: true }],
	};
}

/** content builds an accepted form's content from the answers, by field name, leaving out what was left out. */
export function content(answers: ReadonlyMap<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [k, v] of answers) if (v !== undefined) out[k] = v;
	return out;
}

/** URLConsent is the modal that asks before a URL elicitation's page opens. */
export interface URLConsent {
	message: string;
	detail: string;
	/** Why the page is not offered at all (not http or https); the request is declined then. */
	refuse?: string;
}

/**
 * urlButtons are the URL consent's buttons, in order: Decline first, as
 * VS Code's modal makes the first button its default (Enter), so Enter opens
 * nothing; Escape is VS Code's own Cancel.
 */
export const urlButtons: readonly { title: string; choice: 'decline' | 'open' }[] = [
	{ title: 'Decline', choice: 'decline' },
	{ title: 'Open', choice: 'open' },
];

/** urlConsent words the question for a URL elicitation: who asks, why, and exactly where the page is. */
export function urlConsent(req: ElicitationRequest): URLConsent {
	const raw = req.url ?? '';
	let host = '';
	let refuse: string | undefined;
	try {
		const u = new URL(raw);
		if (u.protocol !== 'https:' && u.protocol !== 'http:') refuse = `it is a ${u.protocol} URL, not a web page`;
		host = u.host;
	} catch {
		refuse = 'it is not a URL';
	}
	return {
		message: `The MCP server ${printable(req.server)} asks you to open a page on ${printable(host || raw)}.`,
		detail: [oneLine(req.message, 500), '', printable(raw), '', 'It opens in your browser only if you choose Open.'].join('\n'),
		...(refuse ? { refuse } : {}),
	};
}
