// A definition review as two documents for VS Code's diff editor: the
// definition the user accepted, and the one the server lists now, the parts
// that changed, each laid out the same way so that the editor pairs them.
// A description is broken into lines, a sentence a line, so that a sentence
// a server slipped in is a line of its own, marked added, where the whole
// text would have been one long line with the change off screen; the
// documents' language (freecode-definition) wraps what is wider than the
// editor (package.json's configurationDefaults). Pure: no `vscode` import.

import type { DefinitionChange, PointerChange, ToolReview } from '../../../frontend/src/protocol.gen';
import { printable } from '../../../frontend/src/text';

/** The widest "key: value" kept on one line; a longer value goes below its key. */
export const inlineColumns = 80;

/** ReviewSides are the two documents of a diff: left the accepted, right the listed. */
export interface ReviewSides {
	accepted: string;
	listed: string;
}

/** reviewSides lays out reviews, one tool after the other, as the two sides of a diff. */
export function reviewSides(reviews: readonly ToolReview[]): ReviewSides {
	const accepted: string[] = [];
	const listed: string[] = [];
	for (const r of reviews) {
		const head = [`// ${printable(r.id)}: ${r.kind === 'new' ? 'a new tool' : 'its definition changed since you accepted it'}`];
		if (r.rejected) head.push('// You rejected this definition: calls of it are denied.');
		if (r.hidden) head.push('// Models are not shown this tool meanwhile: its accepted input schema cannot stand for the new one.');
		// The same on both sides, so that only what changed is marked.
		head.push(`// hash: ${r.hash}`, '// The parts that changed: as you accepted them (left), as the server lists them now (right).');
		accepted.push(...head);
		listed.push(...head);
		if (r.kind === 'new') accepted.push('(none: you never accepted this tool)');
		for (const [key, old, now, form] of parts(r.change)) {
			accepted.push(...field(key, old, form));
			listed.push(...field(key, now, form));
		}
		accepted.push('');
		listed.push('');
	}
	return { accepted: accepted.join('\n'), listed: listed.join('\n') };
}

/** absent stands for a part one side does not have. */
const absent = Symbol('absent');
type Value = unknown | typeof absent;

/**
 * Form is how a part's values are laid out: a text on the key's line when
 * it fits, a text always below its key (a description, so that the
 * sentences both sides share line up), or a JSON value.
 */
type Form = 'text' | 'block' | 'json';

/** parts is each changed part of a definition: its name, its accepted and its listed value, and their form. */
function parts(c: DefinitionChange): [string, Value, Value, Form][] {
	const out: [string, Value, Value, Form][] = [];
	const text = (key: string, t: { old: string; new: string } | undefined, form: Form) => {
		if (t) out.push([key, t.old === '' && c.kind === 'new' ? absent : t.old, t.new, form]);
	};
	text('title', c.title, 'text');
	text('description', c.description, 'block');
	const pointers = (key: string, list: PointerChange[] | undefined) => {
		for (const p of list ?? []) {
			if (p.op === 'more') {
				out.push([`${key}: ${p.pointer}`, absent, absent, 'json']);
				continue;
			}
			const name = `${key} ${p.pointer === '' ? '(whole schema)' : p.pointer}`;
			out.push([name, p.op === 'add' ? absent : p.old, p.op === 'remove' ? absent : p.new, 'json']);
		}
	};
	pointers('inputSchema', c.inputSchema);
	pointers('outputSchema', c.outputSchema);
	for (const h of c.annotations ?? []) out.push([`annotation ${h.hint}`, h.old, h.new, 'json']);
	return out;
}

/**
 * field is one part as lines: "key: value" when it fits (and its form
 * allows), else the key and the value indented below it. A JSON string
 * that fits is quoted; a text, or a JSON string too long for a line, is a
 * sentence a line (sentenceLines).
 */
function field(key: string, v: Value, form: Form): string[] {
	const k = printable(key);
	if (v === absent) return [`${k}: (absent)`];
	if (v === '' && form !== 'json') return [`${k}: (empty)`];
	if (typeof v === 'string' && form === 'json') {
		const quoted = printable(JSON.stringify(v));
		if (k.length + quoted.length + 2 <= inlineColumns) return [`${k}: ${quoted}`];
	}
	if (typeof v === 'string') {
		const lines = sentenceLines(v);
		if (form !== 'block' && lines.length === 1 && k.length + lines[0].length + 2 <= inlineColumns) return [`${k}: ${lines[0]}`];
		return [`${k}:`, ...lines.map((l) => `  ${l}`)];
	}
	const pretty = printable(JSON.stringify(v, null, 2) ?? String(v));
	if (!pretty.includes('\n') && k.length + pretty.length + 2 <= inlineColumns) return [`${k}: ${pretty}`];
	return [`${k}:`, ...pretty.split('\n').map((l) => `  ${l}`)];
}

/**
 * sentenceLines breaks text into lines: at its own line breaks, and after
 * each sentence (at . ! or ? followed by a space). Made printable; an
 * empty text is one empty line.
 */
export function sentenceLines(text: string): string[] {
	const out: string[] = [];
	for (const para of printable(text).split(/\r?\n/)) {
		const p = para.trim();
		out.push(...(p === '' ? [''] : p.split(/(?<=[.!?])\s+/)));
	}
	return out;
}

export const REVIEW = 'Review Changes';
export const ACCEPT_ALL = 'Accept All';
export const REJECT_ALL = 'Reject All';

/**
 * The buttons of the review's notices, in order: VS Code makes the first
 * the primary one. Before the change was seen, the only way on is to look
 * at it; once it is shown, Reject All leads, and Accept All, which lets a
 * changed definition reach models, is never the first.
 */
export const noticeButtons = [REVIEW] as const;
export const decideButtons = [REJECT_ALL, ACCEPT_ALL] as const;

/**
 * decideQuestion is the question beside the diff: the tool by its name
 * when there is one ("notes's 1 tool shown" read as a count, not a tool).
 */
export function decideQuestion(server: string, reviews: readonly ToolReview[]): string {
	if (reviews.length === 1) return `Accept the new definition of ${printable(reviews[0].tool)} on ${printable(server)}, as shown?`;
	return `Accept the new definitions of the ${reviews.length} tools of ${printable(server)}, as shown?`;
}
