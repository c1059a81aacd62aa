// A server whose entry names a secret (${secret:NAME}) that is not set
// fails at once, with lastErrorKind "secret" and the names in
// missingSecrets; Set Secret asks the user for each value in a password
// input and sends it with freecode/secrets/set, which keeps it in the OS
// keychain (else a file only the user can read) and starts the servers that
// missed it. What the row, the input and the outcome say, and the steps,
// for both frontends; each brings its own input. Pure: no `vscode` import.

import type { SecretSetResult, ServerStatus } from './protocol.gen';
import { printable } from './text';

/** missingSecrets is the secrets a server failed for the want of, by name; none for any other server. */
export function missingSecrets(s: ServerStatus): string[] {
	return s.state === 'failed' && s.lastErrorKind === 'secret' ? (s.missingSecrets ?? []) : [];
}

function names(list: readonly string[]): string {
	return list.map(printable).join(', ');
}

/**
 * secretRowChars is the most of a row (the server's name and what it needs)
 * that a side bar of the usual width shows whole beside Set Secret…, the
 * button a hovered row shows ("vs-notes needs secret notes-to…" was cut).
 */
const secretRowChars = 30;

/** needsSecretWords says what a server missing secrets needs: "needs secret GITHUB_TOKEN"; "" for any other. */
export function needsSecretWords(s: ServerStatus): string {
	const missing = missingSecrets(s);
	if (missing.length === 0) return '';
	return `needs ${missing.length === 1 ? 'secret' : 'secrets'} ${names(missing)}`;
}

/**
 * needsSecretRowWords is needsSecretWords for the servers view's row, or
 * "needs a secret" when the names would be cut there (the tooltip,
 * needsSecretTip, names them).
 */
export function needsSecretRowWords(s: ServerStatus): string {
	const words = needsSecretWords(s);
	if (words === '' || `${s.name} ${words}`.length <= secretRowChars) return words;
	const n = missingSecrets(s).length;
	return n === 1 ? 'needs a secret' : `needs ${n} secrets`;
}

/** needsSecretTip is the tooltip's line on the secrets a server misses: which, how to set them, and where they are kept. */
export function needsSecretTip(s: ServerStatus): string {
	const missing = missingSecrets(s);
	if (missing.length === 0) return '';
	const one = missing.length === 1;
	return (
		`Needs the ${one ? 'secret' : 'secrets'} ${names(missing)}, which ${one ? 'is' : 'are'} not set: Set Secret… asks for ${one ? 'its value' : 'their values'} ` +
		`and keeps ${one ? 'it' : 'them'} in your OS keychain (where there is none, in a file only you can read), never in a config file.`
	);
}

/** secretPrompt is the password input's prompt for the secret name of server. */
export function secretPrompt(name: string, server: string): string {
	return `Value of the secret ${printable(name)} for server ${printable(server)} (kept in your OS keychain, never in a file of your project)`;
}

/** secretValueProblem is what the input says of a value it cannot send (an empty one), or undefined. */
export function secretValueProblem(value: string): string | undefined {
	return value === '' ? 'Type the value (or paste it), or press Escape to cancel.' : undefined;
}

/** SecretsSet is what setting a server's secrets did. */
export interface SecretsSet {
	/** The secrets set, in the order asked. */
	names: string[];
	/** Where they are kept: "the OS keychain", or the file's path. */
	where: string;
	/** The servers started again for them, each once. */
	started: string[];
}

/** SecretSender is what setSecrets needs of a session. */
export interface SecretSender {
	setSecret(name: string, value: string): Promise<SecretSetResult>;
}

/**
 * setSecrets asks ask for the value of each secret server misses, then sends
 * each (freecode/secrets/set). Every value is asked before any is sent: a
 * cancel (ask answers undefined) sends nothing and answers undefined. A
 * request that fails rejects with the secret's name in the message; the
 * ones sent before it stay set.
 */
export async function setSecrets(
	sess: SecretSender,
	server: string,
	names: readonly string[],
	ask: (name: string, prompt: string) => Promise<string | undefined>,
): Promise<SecretsSet | undefined> {
	const values: [string, string][] = [];
	for (const name of names) {
		const value = await ask(name, secretPrompt(name, server));
		if (value === undefined || secretValueProblem(value) !== undefined) return undefined;
		values.push([name, value]);
	}
	const out: SecretsSet = { names: [], where: '', started: [] };
	for (const [name, value] of values) {
		let r: SecretSetResult;
		try {
			r = await sess.setSecret(name, value);
		} catch (e) {
			throw new Error(`setting the secret ${printable(name)}: ${(e as Error).message ?? String(e)}`);
		}
		out.names.push(name);
		out.where = r.where;
		for (const s of r.started) if (!out.started.includes(s)) out.started.push(s);
	}
	return out;
}

/**
 * placeWords names where secrets are kept in few words: "the OS keychain" as
 * the sidecar says it, a file by its name alone, which a status bar shows
 * whole where the path under a temporary home would be cut.
 */
export function placeWords(where: string): string {
	if (!/[\\/]/.test(where)) return where;
	return `${where.split(/[\\/]/).pop() || where} (only you can read it)`;
}

/** secretsSetWords says what setting secrets did: "Secret GITHUB_TOKEN saved in the OS keychain; github started". */
export function secretsSetWords(r: SecretsSet): string {
	const saved = `${r.names.length === 1 ? 'Secret' : 'Secrets'} ${names(r.names)} saved in ${printable(placeWords(r.where))}`;
	return r.started.length > 0 ? `${saved}; ${names(r.started)} started` : saved;
}
