// Browse MCP Registry…: the words and arguments of the quick pick that
// searches the registry through `freecode mcp search --json` and installs
// the pick through `freecode mcp install`. Pure, so it is tested without
// VS Code.

import type { RegistryEntry } from '../../../frontend/src/protocol.gen';
import { runsWords } from '../../../frontend/src/registryWords';
import { printable } from '../../../frontend/src/text';

// How a server runs and what is wrong with a value typed are the page's words too.
export { checkValue, installable, runsWords } from '../../../frontend/src/registryWords';

/** RegistryEntry is one server `freecode mcp search --json` prints: the protocol's type, generated. */
export type { RegistryEntry };

/** AskedValue is one value `freecode mcp install --list-values` says the install needs. */
export interface AskedValue {
	name: string;
	description?: string;
	secret?: boolean;
	default?: string;
	choices?: string[];
}

/**
 * searchDebounceMs is how long the typing pauses before a search runs: each
 * search is a process, and one per key would queue a dozen for a word.
 */
export const searchDebounceMs = 250;

/** maxItems caps the list an empty or short query returns (the registry has thousands). */
export const maxItems = 100;

/** parseEntries reads `mcp search --json`'s output; anything else is an error. */
export function parseEntries(stdout: string): RegistryEntry[] {
	const v: unknown = JSON.parse(stdout);
	if (!Array.isArray(v)) throw new Error('the search printed no list');
	return v.filter((e): e is RegistryEntry => typeof e?.name === 'string' && typeof e?.version === 'string');
}

/** parseAsked reads `mcp install --list-values`' output. */
export function parseAsked(stdout: string): AskedValue[] {
	const v: unknown = JSON.parse(stdout);
	if (!Array.isArray(v)) throw new Error('the install printed no list of values');
	return v.filter((a): a is AskedValue => typeof a?.name === 'string');
}

/** RegistryItem is a quick pick item of one server. */
export interface RegistryItem {
	label: string;
	description: string;
	detail: string;
	alwaysShow: true;
	entry: RegistryEntry;
}

/**
 * entryItems are the quick pick's items: the title (else the name) as the
 * label, name@version and how it runs beside it, the description below.
 * alwaysShow, as the registry did the matching: the quick pick's own
 * filter would hide a server found by its description.
 */
export function entryItems(entries: readonly RegistryEntry[]): RegistryItem[] {
	return entries.slice(0, maxItems).map((e) => {
		const status = e.status && e.status !== 'active' ? `${e.status} — ` : '';
		return {
			label: printable(e.title || e.name),
			description: `${printable(e.name)}@${printable(e.version)} · ${printable(runsWords(e.runs))}`,
			detail: status + printable(e.description),
			alwaysShow: true,
			entry: e,
		};
	});
}

/** noneWords is the quick pick's placeholder when a search finds nothing. */
export function noneWords(query: string): string {
	return query.trim() === '' ? 'The registry lists no server.' : `No server matches "${printable(query.trim())}".`;
}

/** entryName is the name install gives the entry: the registry name's last part (cmd/freecode entryName). */
export function entryName(registryName: string): string {
	const i = registryName.indexOf('/');
	const last = i < 0 ? registryName : registryName.slice(i + 1) || registryName;
	return last.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^[-_]+|[-_]+$/g, '');
}

/** installArgs are the CLI's arguments of the install of e, as name (given when the default is taken), the values on stdin. */
export function installArgs(e: RegistryEntry, name: string | undefined, listValues: boolean): string[] {
	const args = ['mcp', 'install', `${e.name}@${e.version}`, '--yes'];
	if (name) args.push('--name', name);
	args.push(listValues ? '--list-values' : '--values-stdin');
	return args;
}

/** ValuePrompt is the input box of one value. */
export interface ValuePrompt {
	title: string;
	prompt: string;
	value: string;
	password: boolean;
}

/** valuePrompt is the input box asking v, the i-th of n values of the server named server. */
export function valuePrompt(server: string, v: AskedValue, i: number, n: number): ValuePrompt {
	const what = v.description ? `${printable(v.name)}: ${printable(v.description)}` : printable(v.name);
	const choices = v.choices && v.choices.length > 0 ? ` (one of ${v.choices.map(printable).join(', ')})` : '';
	const kept = v.secret ? ' — a secret, kept in the OS keychain (or a file only you can read), never in a config file' : '';
	return {
		title: `Install ${printable(server)} (${i + 1}/${n})`,
		prompt: what + choices + kept,
		value: v.secret ? '' : v.default ?? '',
		password: v.secret === true,
	};
}

/**
 * installedWords is what the status bar says of the install, short enough
 * that the bar does not cut it: the CLI's "✓ Installed io.example/weather
 * 1.4.0 as local server "weather" in /home/me/.freecode/config.json" as
 * "Installed "weather" from io.example/weather@1.4.0 in config.json", and
 * how many secrets it kept.
 */
export function installedWords(stdout: string): string {
	const lines = stdout.split('\n');
	const done = (lines.find((l) => l.startsWith('✓')) ?? lines[0] ?? '').replace(/^✓\s*/u, '').trim();
	const secrets = lines.filter((l) => /^\s*secret \S+ saved in the secret store/.test(l)).length;
	const m = /^Installed (\S+) (\S+) as \S+ server "(.*)" in (?:.*[/\\])?([^/\\]+)$/.exec(done);
	const said = m ? `Installed "${m[3]}" from ${m[1]}@${m[2]} in ${m[4]}` : done;
	return secrets === 0 ? said : `${said}, ${secrets} secret${secrets > 1 ? 's' : ''} kept`;
}
