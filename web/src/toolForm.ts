// Run a tool from a form: one field per top-level property of its input
// schema, each of the kind its type says, required ones prefilled with the
// value Run Tool… in the extension starts from (schemaPrefill.sample), and
// back from the fields to the call's arguments. Pure: no DOM.

import type { PromptInfo } from '../../editors/vscode/src/protocol';
import { resolved, sample, shapeOf } from '../../editors/vscode/src/schemaPrefill';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

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

function kindOf(s: Record<string, unknown>): FieldKind {
	if (Array.isArray(s.enum) && s.enum.length > 0) return 'enum';
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
	return String(v);
}

/** toolFields reads a tool's input schema into fields, required ones first, each group in the schema's order. */
export function toolFields(inputSchema: unknown): ToolField[] {
	const shape = shapeOf(inputSchema);
	const required = new Set(shape.required);
	const names = [...shape.required.filter((n) => !(n in shape.properties)), ...Object.keys(shape.properties)];
	const fields = [...new Set(names)].map((name): ToolField => {
		const s = resolved(shape.properties[name], shape.root);
		const kind = kindOf(s);
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
