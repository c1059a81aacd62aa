// Running the freecode CLI for what the protocol has no method for yet:
// adding and importing servers (the CLI's edits keep the config file's
// comments and other keys). No shell: arguments go to the process as given.

import { execFile } from 'node:child_process';
import { cliArgs, type Settings } from './settings';

export interface CliResult {
	code: number;
	stdout: string;
	stderr: string;
}

/** A CLI edit reads and writes one file; a minute means something is wrong. */
const cliTimeoutMs = 60_000;

/**
 * runCli runs `freecode [--config PATH] args…` and returns its output,
 * whatever its exit code. input, if given, is its standard input (values
 * a command line would show, such as secrets).
 */
export function runCli(s: Settings, args: readonly string[], input?: string): Promise<CliResult> {
	return new Promise((resolve, reject) => {
		const child = execFile(s.cliPath, cliArgs(s, args), { timeout: cliTimeoutMs, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
			if (err && typeof err.code !== 'number') {
				const why = err.code === 'ENOENT' ? `${s.cliPath} was not found (set freecode.cliPath)` : err.message;
				reject(new Error(`running the freecode CLI: ${why}`));
				return;
			}
			resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
		});
		if (input !== undefined) {
			// A CLI that exits before reading all of it is not an error here:
			// its exit code and output say what happened.
			child.stdin?.on('error', () => {});
			child.stdin?.end(input);
		}
	});
}

/** message is one line of the CLI's output for a notification: without the ✓ or ✗ a terminal reader gets. */
export function message(line: string): string {
	return line.trim().replace(/^[✓✗]\s*/u, '');
}

/**
 * outcome is the line of the CLI's output a notification says when a
 * command went well: its ✓ line (as "✓ Added 2 servers."), not what
 * follows it (an import that added servers reading secrets not set yet
 * ends "Until each is set, the servers that read it do not start.", which
 * alone says nothing of what was done); else its last line.
 */
export function outcome(out: string): string {
	const lines = out.split('\n').filter((l) => l.trim() !== '');
	const done = lines.filter((l) => /^\s*✓/u.test(l)).at(-1);
	return message(done ?? lines.at(-1) ?? '');
}

/**
 * cliError is what a failed CLI command said, for a notification: its
 * "freecode: " prefix and its config warnings ("warning: …", which the
 * Problems view shows with their positions) left out.
 */
export function cliError(r: CliResult): string {
	const said = (r.stderr.trim() ? r.stderr : r.stdout).split('\n');
	const lines = said.map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('warning: '));
	const text = (lines.length > 0 ? lines : said.map((l) => l.trim()).filter((l) => l !== '')).join('\n').replace(/^freecode: /, '');
	return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * addedWords is the CLI's "✓ Added local server "x" to /a/long/path/config.json"
 * as the status bar says it, with the file's name alone: the bar cuts a
 * long line.
 */
export function addedWords(stdout: string): string {
	const line = message(stdout.split('\n')[0]);
	return line.replace(/ to (\S*[/\\])?([^/\\\s]+)$/, ' to $2');
}
