// Run-time checks of JSON against the protocol's types: the combinators
// protocol.gen.ts builds one check per wire type from. A check rejects a
// missing required field, a field the type does not have, and a value of
// the wrong type or outside its union, which is what keeps the two sides
// of the wire in step when the other side is a sidecar of another build.
//
// Pure: no `vscode` import, no DOM.

/** Check validates one value, appending "path: problem" lines to errs. V is the type it stands for. */
export type Check<V> = ((v: unknown, path: string, errs: string[]) => void) & {
	// Never set: it makes Check invariant in V, so a Check<string> cannot
	// stand where a Check<number> (or a Check<'a' | 'b'>) is expected.
	readonly __type?: (v: V) => V;
	/** What an object check's fields are, or an array check's items: for coverage. */
	readonly meta?: { fields?: Record<string, Field<unknown, boolean>>; item?: Check<unknown> };
};

export interface Field<V, O extends boolean> {
	optional: O;
	check: Check<V>;
}

type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];

/** Shape lists every field of T, each with its check and whether it may be left out. */
export type Shape<T> = {
	[K in keyof T]-?: Field<Exclude<T[K], undefined>, K extends OptionalKeys<T> ? true : false>;
};

function typed<V>(fn: (v: unknown, path: string, errs: string[]) => void): Check<V> {
	return fn as Check<V>;
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const str = typed<string>((v, path, errs) => {
	if (typeof v !== 'string') errs.push(`${path}: want a string, got ${kind(v)}`);
});
export const num = typed<number>((v, path, errs) => {
	if (typeof v !== 'number' || !Number.isFinite(v)) errs.push(`${path}: want a number, got ${kind(v)}`);
});
export const bool = typed<boolean>((v, path, errs) => {
	if (typeof v !== 'boolean') errs.push(`${path}: want a boolean, got ${kind(v)}`);
});
/** anyValue accepts any JSON value, for what the protocol leaves open (schemas, MCP payloads). */
export const anyValue = typed<unknown>(() => {});

/** oneOf accepts a string among values: a union of string literals. */
export function oneOf<T extends string>(values: readonly T[]): Check<T> {
	const allowed = new Set<string>(values);
	return typed<T>((v, path, errs) => {
		if (typeof v !== 'string' || !allowed.has(v)) {
			errs.push(`${path}: want one of ${values.join(', ')}, got ${JSON.stringify(v)}`);
		}
	});
}

/** kindOf accepts a value of one of the JSON kinds named (a boolean or a string, say). */
export function kindOf<V>(...kinds: ('string' | 'number' | 'boolean')[]): Check<V> {
	return typed<V>((v, path, errs) => {
		if (!(kinds as string[]).includes(typeof v)) errs.push(`${path}: want a ${kinds.join(' or a ')}, got ${kind(v)}`);
	});
}

export function arrayOf<V>(item: Check<V>): Check<V[]> {
	const c = typed<V[]>((v, path, errs) => {
		if (!Array.isArray(v)) {
			errs.push(`${path}: want an array, got ${kind(v)}`);
			return;
		}
		v.forEach((x, i) => item(x, `${path}[${i}]`, errs));
	});
	return Object.assign(c, { meta: { item: item as Check<unknown> } });
}

/** recordOf accepts an object whose values all fit value (a Go map). */
export function recordOf<V>(value: Check<V>): Check<Record<string, V>> {
	return typed<Record<string, V>>((v, path, errs) => {
		if (!isObject(v)) {
			errs.push(`${path}: want an object, got ${kind(v)}`);
			return;
		}
		for (const [k, x] of Object.entries(v)) value(x, `${path}.${k}`, errs);
	});
}

export function req<V>(check: Check<V>): Field<V, false> {
	return { optional: false, check };
}
export function opt<V>(check: Check<V>): Field<V, true> {
	return { optional: true, check };
}

/** obj checks an object against a shape: required fields present, no field the shape does not name. */
export function obj<T>(shape: Shape<T>): Check<T> {
	return object<T>(shape as Record<string, Field<unknown, boolean>>, false);
}

/** KnownFields is T without its index signature: the fields an open object names. */
export type KnownFields<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/** openObj is obj for an object the protocol names only some fields of (an MCP payload): others may come too. */
export function openObj<T>(shape: Shape<KnownFields<T>>): Check<T> {
	return object<T>(shape as Record<string, Field<unknown, boolean>>, true);
}

function object<T>(shape: Record<string, Field<unknown, boolean>>, open: boolean): Check<T> {
	const fields = Object.entries(shape);
	const known = new Set(fields.map(([k]) => k));
	const c = typed<T>((v, path, errs) => {
		if (!isObject(v)) {
			errs.push(`${path}: want an object, got ${kind(v)}`);
			return;
		}
		for (const [key, f] of fields) {
			if (!(key in v) || v[key] === undefined) {
				if (!f.optional) errs.push(`${path}.${key}: missing`);
				continue;
			}
			f.check(v[key], `${path}.${key}`, errs);
		}
		if (open) return;
		for (const key of Object.keys(v)) {
			if (!known.has(key)) errs.push(`${path}.${key}: not a field of this type`);
		}
	});
	return Object.assign(c, { meta: { fields: shape } });
}

/**
 * fieldPaths lists every field path a check describes ("$.serverInfo.name";
 * a map's keys are not fields), and seenPaths the ones a value fills: a
 * fixture set that leaves a field out cannot catch its rename, so the tests
 * ask for every path.
 */
export function fieldPaths(check: Check<unknown>, path = '$'): string[] {
	const out: string[] = [];
	const m = check.meta;
	if (m?.fields) {
		for (const [k, f] of Object.entries(m.fields)) {
			out.push(`${path}.${k}`, ...fieldPaths(f.check, `${path}.${k}`));
		}
	}
	if (m?.item) out.push(...fieldPaths(m.item, `${path}[]`));
	return out;
}

export function seenPaths(check: Check<unknown>, v: unknown, path = '$', into = new Set<string>()): Set<string> {
	const m = check.meta;
	if (m?.fields && isObject(v)) {
		for (const [k, f] of Object.entries(m.fields)) {
			const x = v[k];
			if (x === undefined) continue;
			into.add(`${path}.${k}`);
			seenPaths(f.check, x, `${path}.${k}`, into);
		}
	}
	if (m?.item && Array.isArray(v)) for (const x of v) seenPaths(m.item, x, `${path}[]`, into);
	return into;
}

/** validate returns every problem of v against check; empty means it conforms. */
export function validate<V>(check: Check<V>, v: unknown, path = '$'): string[] {
	const errs: string[] = [];
	check(v, path, errs);
	return errs;
}

/** is narrows v to V when it conforms to check. */
export function is<V>(check: Check<V>, v: unknown): v is V {
	return validate(check, v).length === 0;
}
