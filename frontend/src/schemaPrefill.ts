// Run Tool…'s starting arguments: a JSON document with every required
// property of the tool's input schema filled with a value of the right type
// (its default, const, first enum value or example when it has one), and the
// optional properties named in comment lines above it. Pure.

type Schema = Record<string, unknown>;

/** How deep $ref chains and nested objects are followed: recursive schemas stop here. */
const maxDepth = 8;

function isObject(v: unknown): v is Schema {
	return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** resolve follows a local $ref (#/$defs/x, #/definitions/x, any #/a/b pointer) within root. */
function resolve(s: Schema, root: Schema): Schema {
	let cur = s;
	for (let i = 0; i < maxDepth && typeof cur.$ref === 'string'; i++) {
		const ref = cur.$ref as string;
		if (!ref.startsWith('#')) return {};
		let target: unknown = root;
		for (const raw of ref.slice(1).split('/').filter((x) => x !== '')) {
			const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
			target = isObject(target) ? target[key] : undefined;
		}
		if (!isObject(target)) return {};
		// Siblings of $ref (draft 2019+) add to the target.
		const { $ref: _ignored, ...rest } = cur;
		cur = { ...target, ...rest };
	}
	return cur;
}

/** merge folds allOf into one schema: properties and required lists joined. */
function merge(s: Schema, root: Schema): Schema {
	if (!Array.isArray(s.allOf)) return s;
	let out: Schema = { ...s };
	delete out.allOf;
	for (const part of s.allOf) {
		if (!isObject(part)) continue;
		const p = merge(resolve(part, root), root);
		out = {
			...p,
			...out,
			properties: { ...(isObject(p.properties) ? p.properties : {}), ...(isObject(out.properties) ? out.properties : {}) },
			required: [
				...(Array.isArray(p.required) ? p.required : []),
				...(Array.isArray(out.required) ? out.required : []),
			],
		};
	}
	return out;
}

function typeOf(s: Schema): string | undefined {
	if (typeof s.type === 'string') return s.type;
	if (Array.isArray(s.type)) {
		const t = s.type.find((x) => x !== 'null');
		return typeof t === 'string' ? t : 'null';
	}
	if (isObject(s.properties) || Array.isArray(s.required)) return 'object';
	if (s.items !== undefined) return 'array';
	return undefined;
}

/** sample returns a value for schema s: what a user starts editing from. */
export function sample(schema: unknown, root: unknown = schema, depth = 0): unknown {
	if (!isObject(schema) || !isObject(root) || depth > maxDepth) return null;
	let s = merge(resolve(schema, root), root);
	if ('default' in s) return s.default;
	if ('const' in s) return s.const;
	if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
	if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
	const alt = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
	if (alt && typeOf(s) === undefined) {
		const first = alt.find((a) => isObject(a) && a.type !== 'null') ?? alt[0];
		return sample(first, root, depth + 1);
	}
	switch (typeOf(s)) {
		case 'string':
			return '';
		case 'integer':
		case 'number': {
			if (typeof s.minimum === 'number') return s.minimum;
			if (typeof s.exclusiveMinimum === 'number') {
				return typeOf(s) === 'integer' ? Math.floor(s.exclusiveMinimum) + 1 : s.exclusiveMinimum + 1;
			}
			return 0;
		}
		case 'boolean':
			return false;
		case 'null':
			return null;
		case 'array': {
			const min = typeof s.minItems === 'number' ? Math.min(s.minItems, 3) : 0;
			return Array.from({ length: min }, () => sample(s.items, root, depth + 1));
		}
		case 'object': {
			s = merge(s, root);
			const props = isObject(s.properties) ? s.properties : {};
			const out: Record<string, unknown> = {};
			for (const name of Array.isArray(s.required) ? s.required : []) {
				if (typeof name !== 'string' || name in out) continue;
				out[name] = sample(props[name] ?? {}, root, depth + 1);
			}
			return out;
		}
		default:
			return null;
	}
}

function describe(s: unknown, root: Schema): string {
	if (!isObject(s)) return '';
	const r = merge(resolve(s, root), root);
	const bits: string[] = [];
	const t = typeOf(r);
	if (t) bits.push(t);
	if (Array.isArray(r.enum)) bits.push(`one of ${r.enum.map((e) => JSON.stringify(e)).join(', ')}`);
	if (typeof r.description === 'string') bits.push(r.description.replace(/\s+/g, ' ').slice(0, 100));
	return bits.join(': ');
}

/** Shape is a tool's input schema at the top: its properties, which are required, and the root their $refs resolve in. */
export interface Shape {
	properties: Record<string, unknown>;
	required: string[];
	root: Record<string, unknown>;
}

/** shapeOf reads the top of an input schema, its $ref and allOf followed, for a form of one field per property. */
export function shapeOf(inputSchema: unknown): Shape {
	const root = isObject(inputSchema) ? inputSchema : {};
	const top = merge(resolve(root, root), root);
	const properties = isObject(top.properties) ? top.properties : {};
	const required = (Array.isArray(top.required) ? top.required : []).filter((x): x is string => typeof x === 'string');
	return { properties, required: [...new Set(required)], root };
}

/** resolved is one property's schema with its $ref and allOf followed within root. */
export function resolved(schema: unknown, root: Record<string, unknown>): Record<string, unknown> {
	return isObject(schema) ? merge(resolve(schema, root), root) : {};
}

/**
 * argumentsDocument is the text Run Tool… opens: "//" lines naming the tool
 * and its optional properties, then the required ones as JSON.
 */
export function argumentsDocument(toolId: string, inputSchema: unknown): string {
	const root = isObject(inputSchema) ? inputSchema : {};
	const value = sample(root) ?? {};
	const top = merge(resolve(root, root), root);
	const props = isObject(top.properties) ? top.properties : {};
	const required = new Set(Array.isArray(top.required) ? top.required : []);
	// Lines short enough for an editor beside the side bar: one wider ran
	// past its width, and the editor does not wrap a .jsonc by default.
	const lines = [
		`// Arguments for ${toolId}.`,
		'// Edit them, then run "FreeCode: Run Tool with These Arguments"',
		'// (the ▶ button of this editor). Lines starting with // are ignored.',
	];
	const optional = Object.keys(props).filter((k) => !required.has(k));
	if (optional.length > 0) {
		lines.push('// Optional:');
		for (const k of optional) lines.push(`//   ${k}: ${describe(props[k], root)}`.replace(/\s+$/, ''));
	}
	return `${lines.join('\n')}\n${JSON.stringify(value, null, 2)}\n`;
}

/** parseArgumentsDocument reads the edited document back: comment lines dropped, the rest JSON. */
export function parseArgumentsDocument(text: string): { value?: unknown; error?: string } {
	// Whole-line comments only: pretty JSON never starts a line inside a
	// string, so no string can be mistaken for one.
	const json = text
		.split(/\r?\n/)
		.filter((l) => !/^\s*\/\//.test(l))
		.join('\n')
		.trim();
	if (json === '') return { value: {} };
	try {
		return { value: JSON.parse(json) };
	} catch (e) {
		return { error: `The arguments are not JSON: ${(e as Error).message}` };
	}
}

/**
 * takesNoArguments says whether a tool's input schema has nothing to fill
 * in: no property, required or optional (an object schema with none, or no
 * schema at all). Such a tool runs at once, with {}.
 */
export function takesNoArguments(inputSchema: unknown): boolean {
	if (!isObject(inputSchema)) return true;
	const top = merge(resolve(inputSchema, inputSchema), inputSchema);
	const props = isObject(top.properties) ? Object.keys(top.properties) : [];
	const required = Array.isArray(top.required) ? top.required : [];
	const more = top.additionalProperties === true || isObject(top.additionalProperties) || isObject(top.patternProperties);
	return props.length === 0 && required.length === 0 && !more && !Array.isArray(top.anyOf) && !Array.isArray(top.oneOf);
}
