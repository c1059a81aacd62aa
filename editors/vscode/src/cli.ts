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

/** runCli runs `freecode [--config PATH] args…` and returns its output, whatever its exit code. */
export function runCli(s: Settings, args: readonly string[]): Promise<CliResult> {
	return new Promise((resolve, reject) => {
		execFile(s.cliPath, cliArgs(s, args), { timeout: cliTimeoutMs, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
			if (err && typeof err.code !== 'number') {
				const why = err.code === 'ENOENT' ? `${s.cliPath} was not found (set freecode.cliPath)` : err.message;
				reject(new Error(`running the freecode CLI: ${why}`));
				return;
			}
			resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
		});
	});
}

/** message is one line of the CLI's output for a notification: without the ✓ or ✗ a terminal reader gets. */
export function message(line: string): string {
	return line.trim().replace(/^[✓✗]\s*/u, '');
}
