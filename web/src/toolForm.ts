// Run a tool from a form: one field per top-level property of its input
// schema, each of the kind its type says, required ones prefilled with the
// value Run Tool… in the extension starts from (schemaPrefill.sample), and
// back from the fields to the call's arguments. Pure: no DOM.

import type { PromptInfo } from '../../frontend/src/protocol.gen';
import { resolved, sample, shapeOf } from '../../frontend/src/schemaPrefill';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'list' | 'json';

/** ToolField is one property as a form field. */
export interface ToolField {
	name: string;
	kind: FieldKind;
	required: boolean;
	/** title, description and type, for the field's label and hint. */
	title?: string;
	description?: string;
	/** An enum's values, as JSON text for the select's options. */
	choices?: string[];
	/** With choices: what each option shows (a string as it is, not quoted). */
	labels?: string[];
	/** A list's items' kind: one item a line, each read as that kind. */
	items?: 'string' | 'number' | 'integer' | 'boolean';
	/** A JSON field's shape, as the extension's prefill would write it: the placeholder of an empty one. */
	example?: string;
	/** What the field starts with: text (for a boolean "true"/"false"; "" leaves an optional field out). */
	initial: string;
}

function typeName(s: Record<string, unknown>): string | undefined {
	if (typeof s.type === 'string') return s.type;
	if (Array.isArray(s.type)) {
		const t = s.type.filter((x) => x !== 'null');
		return t.length === 1 && typeof t[0] === 'string' ? t[0] : undefined;
	}
	return undefined;
}

/** example is a JSON field's shape: an object with each of its properties, an array with one such item. */
function example(s: Record<string, unknown>, root: Record<string, unknown>): string {
	return JSON.stringify(shapeOfValue(s, root));
}

function shapeOfValue(s: Record<string, unknown>, root: Record<string, unknown>): unknown {
	const t = typeName(s);
	if (t === 'array' && s.items !== null && typeof s.items === 'object' && !Array.isArray(s.items)) return [shapeOfValue(resolved(s.items, root), root)];
	if (t === 'object' && s.properties !== null && typeof s.properties === 'object' && !Array.isArray(s.properties)) {
		return Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, sample(resolved(v, root), root)]));
	}
	return sample(s, root);
}

/** itemKind is the kind of an array's items when they are plain values; undefined otherwise. */
function itemKind(s: Record<string, unknown>, root: Record<string, unknown>): ToolField['items'] {
	if (typeName(s) !== 'array' || s.items === null || typeof s.items !== 'object' || Array.isArray(s.items)) return undefined;
	const it = resolved(s.items, root);
	if (Array.isArray(it.enum)) return undefined;
	const t = typeName(it);
	return t === 'string' || t === 'number' || t === 'integer' || t === 'boolean' ? t : undefined;
}

function kindOf(s: Record<string, unknown>, root: Record<string, unknown>): FieldKind {
	if (Array.isArray(s.enum) && s.enum.length > 0) return 'enum';
	if (itemKind(s, root)) return 'list';
	switch (typeName(s)) {
		case 'string':
			return 'string';
		case 'number':
			return 'number';
		case 'integer':
			return 'integer';
		case 'boolean':
			return 'boolean';
		default:
			return 'json';
	}
}

function text(kind: FieldKind, v: unknown): string {
	if (v === undefined) return '';
	if (kind === 'string') return typeof v === 'string' ? v : JSON.stringify(v);
	if (kind === 'json') return JSON.stringify(v, null, 2);
	if (kind === 'enum') return JSON.stringify(v);
	if (kind === 'list') return Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('\n') : JSON.stringify(v);
	return String(v);
}

/** toolFields reads a tool's input schema into fields, required ones first, each group in the schema's order. */
export function toolFields(inputSchema: unknown): ToolField[] {
	const shape = shapeOf(inputSchema);
	const required = new Set(shape.required);
	const names = [...shape.required.filter((n) => !(n in shape.properties)), ...Object.keys(shape.properties)];
	const fields = [...new Set(names)].map((name): ToolField => {
		const s = resolved(shape.properties[name], shape.root);
		const kind = kindOf(s, shape.root);
		const req = required.has(name);
		// A required field starts from the value the extension's document
		// starts from; an optional one from its default only, else empty,
		// which leaves it out.
		const start = req ? sample(s, shape.root) : 'default' in s ? s.default : undefined;
		return {
			name,
			kind,
			required: req,
			title: typeof s.title === 'string' ? s.title : undefined,
			description: typeof s.description === 'string' ? s.description : undefined,
			choices: kind === 'enum' ? (s.enum as unknown[]).map((e) => JSON.stringify(e)) : undefined,
			labels: kind === 'enum' ? (s.enum as unknown[]).map((e) => (typeof e === 'string' ? e : JSON.stringify(e))) : undefined,
			items: kind === 'list' ? itemKind(s, shape.root) : undefined,
			example: kind === 'json' ? example(s, shape.root) : undefined,
			initial: kind === 'boolean' && req && typeof start !== 'boolean' ? 'false' : text(kind, start),
		};
	});
	return [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
}

export type Arguments = { value: Record<string, unknown> } | { errors: { field: string; message: string }[] };

/** toolArguments reads the fields' texts back (by name) into arguments; an empty optional field is left out. */
export function toolArguments(fields: readonly ToolField[], texts: ReadonlyMap<string, string>): Arguments {
	const value: Record<string, unknown> = {};
	const errors: { field: string; message: string }[] = [];
	for (const f of fields) {
		const t = texts.get(f.name) ?? '';
		if (t.trim() === '' && f.kind !== 'string') {
			if (f.required) errors.push({ field: f.name, message: 'required' });
			continue;
		}
		if (t === '' && f.kind === 'string' && !f.required) continue;
		switch (f.kind) {
			case 'string':
				value[f.name] = t;
				break;
			case 'number':
			case 'integer': {
				const n = Number(t.trim());
				if (!Number.isFinite(n)) errors.push({ field: f.name, message: `not a number: ${t}` });
				else if (f.kind === 'integer' && !Number.isInteger(n)) errors.push({ field: f.name, message: `not a whole number: ${t}` });
				else value[f.name] = n;
				break;
			}
			case 'boolean':
				if (t !== 'true' && t !== 'false') errors.push({ field: f.name, message: 'true or false' });
				else value[f.name] = t === 'true';
				break;
			case 'list': {
				const out: unknown[] = [];
				for (const line of t.split('\n').map((l) => l.trim()).filter((l) => l !== '')) {
					if (f.items === 'string') out.push(line);
					else if (f.items === 'boolean' && (line === 'true' || line === 'false')) out.push(line === 'true');
					else if ((f.items === 'number' || f.items === 'integer') && Number.isFinite(Number(line)) && (f.items === 'number' || Number.isInteger(Number(line)))) out.push(Number(line));
					else errors.push({ field: f.name, message: `not ${f.items === 'integer' ? 'a whole number' : f.items === 'boolean' ? 'true or false' : 'a number'}: ${line}` });
				}
				value[f.name] = out;
				break;
			}
			case 'enum':
			case 'json':
				try {
					value[f.name] = JSON.parse(t);
				} catch (e) {
					errors.push({ field: f.name, message: `not JSON: ${(e as Error).message}` });
				}
				break;
		}
	}
	return errors.length > 0 ? { errors } : { value };
}

/** promptSchema is a prompt's arguments as an input schema: each a string, required as the prompt says. */
export function promptSchema(p: PromptInfo): Record<string, unknown> {
	const properties: Record<string, unknown> = {};
	for (const a of p.arguments ?? []) properties[a.name] = { type: 'string', title: a.title, description: a.description };
	return { type: 'object', properties, required: (p.arguments ?? []).filter((a) => a.required).map((a) => a.name) };
}
