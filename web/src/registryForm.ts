// The page's Install from the MCP Registry, its pure part: a search that
// runs as one types (debounced, one request at a time, only the latest
// query's answer shown), a result's lines, the form of the values an
// install asks (a password input for a secret, a list for choices, the
// default filled in) and the values read back from it. No DOM.

import type { RegistryEntry, RegistryValue, RegistryValuesResult } from '../../frontend/src/protocol.gen';
import { checkValue, runsWords, runWord } from '../../frontend/src/registryWords';
import { printable } from '../../frontend/src/text';

/** searchDebounceMs is how long typing pauses before a search is sent: one per key would queue a dozen for a word. */
export const searchDebounceMs = 250;

/** maxResults is how many servers a search shows (the registry lists thousands): the rest are counted. */
export const maxResults = 50;

/** Schedule runs fn after ms and returns what cancels it (setTimeout, or a test's clock). */
export type Schedule = (fn: () => void, ms: number) => () => void;

export const realSchedule: Schedule = (fn, ms) => {
	const t = setTimeout(fn, ms);
	return () => clearTimeout(t);
};

/**
 * LatestSearch runs a search for what was typed once typing pauses, one at
 * a time: a query typed while one runs is sent when it ends, and only the
 * answer to the latest query is shown (an older one's, or its failure, is
 * dropped).
 */
export class LatestSearch<R> {
	private cancelTimer?: () => void;
	private wanted?: string;
	private running = false;
	private closed = false;

	constructor(
		private readonly search: (query: string) => Promise<R>,
		private readonly show: (query: string, result: R) => void,
		private readonly fail: (query: string, error: unknown) => void,
		private readonly schedule: Schedule = realSchedule,
		private readonly delayMs = searchDebounceMs,
	) {}

	/** typed says the query changed: it is searched once typing pauses. */
	typed(query: string): void {
		this.cancelTimer?.();
		this.cancelTimer = this.schedule(() => this.now(query), this.delayMs);
	}

	/** now searches query at once (Enter, the first search). */
	now(query: string): void {
		this.cancelTimer?.();
		this.cancelTimer = undefined;
		if (this.closed) return;
		this.wanted = query;
		if (!this.running) void this.run();
	}

	/** close drops every answer still to come. */
	close(): void {
		this.closed = true;
		this.cancelTimer?.();
		this.wanted = undefined;
	}

	private async run(): Promise<void> {
		this.running = true;
		while (this.wanted !== undefined) {
			const q = this.wanted;
			this.wanted = undefined;
			let ok = false;
			let result: R | undefined;
			let error: unknown;
			try {
				result = await this.search(q);
				ok = true;
			} catch (e) {
				error = e;
			}
			// A newer query waits: this answer is already stale.
			if (this.closed || this.wanted !== undefined) continue;
			if (ok) this.show(q, result as R);
			else this.fail(q, error);
		}
		this.running = false;
	}
}

/** ResultLines are what a result shows: name@version as its head, the title, how it runs, the description. */
export interface ResultLines {
	head: string;
	title: string;
	runs: string;
	description: string;
	/** deprecated, or "" when active. */
	status: string;
}

export function resultLines(e: RegistryEntry): ResultLines {
	return {
		head: `${printable(e.name)}@${printable(e.version)}`,
		title: printable(e.title ?? ''),
		runs: printable(runsWords(e.runs)),
		description: printable(e.description),
		status: e.status && e.status !== 'active' ? printable(e.status) : '',
	};
}

/** searchStatus says what a search found: nothing, all of it, or how much is shown. */
export function searchStatus(query: string, shown: number, total: number): string {
	const q = query.trim();
	if (total === 0) return q === '' ? 'The registry lists no server.' : `No server matches "${printable(q)}".`;
	if (shown < total) return `${shown} of ${total} servers shown: type to narrow the search.`;
	return total === 1 ? '1 server.' : `${total} servers.`;
}

/** howItRuns says how the install would run the server: "PyPI (uvx): mcp-weather==1.4.0". */
export function howItRuns(v: RegistryValuesResult): string {
	return `${runWord(v.runs)}: ${printable(v.package)}`;
}

/** ValueField is one value asked for, as the form's field. */
export interface ValueField {
	name: string;
	kind: 'secret' | 'choice' | 'text';
	/** The label, and the hint under it. */
	label: string;
	hint: string;
	choices: string[];
	/** What the field starts with: the default (never for a secret). */
	initial: string;
	value: RegistryValue;
}

/** valueFields are the form's fields, in the order the install asks the values. */
export function valueFields(values: readonly RegistryValue[]): ValueField[] {
	return values.map((v) => {
		const kind = v.secret ? 'secret' : v.choices && v.choices.length > 0 ? 'choice' : 'text';
		const hint = [
			v.description ? printable(v.description) : '',
			v.secret ? 'a secret: kept in your OS keychain (or a file only you can read), never in a config file' : '',
			v.default && !v.secret ? `default ${printable(v.default)}` : '',
		]
			.filter(Boolean)
			.join(' · ');
		return { name: v.name, kind, label: printable(v.name), hint, choices: (v.choices ?? []).map(String), initial: v.secret ? '' : v.default ?? '', value: v };
	});
}

export type Values = { values: Record<string, string> } | { errors: { field: string; message: string }[] };

/** readValues reads the fields' texts (by name) back into the install's values, each checked; an empty one takes its default. */
export function readValues(fields: readonly ValueField[], texts: ReadonlyMap<string, string>): Values {
	const values: Record<string, string> = {};
	const errors: { field: string; message: string }[] = [];
	for (const f of fields) {
		// A secret is taken as typed: spaces may be part of it.
		const t = f.kind === 'secret' ? texts.get(f.name) ?? '' : (texts.get(f.name) ?? '').trim();
		const problem = checkValue(f.value, t);
		if (problem) errors.push({ field: f.name, message: problem });
		else values[f.name] = t === '' ? f.value.default ?? '' : t;
	}
	return errors.length > 0 ? { errors } : { values };
}
