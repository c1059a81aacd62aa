// The sign-in page as the browser is handed it when VS Code would start it
// with the URL on a command line (issue 30). On Linux and the BSDs,
// vscode.env.openExternal runs xdg-open with the URL as an argument, and
// xdg-open the browser with it: every local user may read a process's
// argv, and the URL of an OAuth sign-in carries its state, with which
// another user can answer the sidecar's loopback callback first (failing
// the sign-in, or signing FreeCode in to that user's own account). So
// there the extension writes a page that sends the browser on to the URL
// into a file only the user can read, ~/.freecode/browser/redirect-….html
// (0600 in 0700, as the sidecar's own opener does, internal/browserfile),
// and hands openExternal the file. Pure: no `vscode` import.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where the pages go: beside the sidecar's, in FreeCode's own directory. */
export function signInPageDir(): string {
	return path.join(os.homedir(), '.freecode', 'browser');
}

/** How long a page is kept: a sign-in waits five minutes, and the browser reads the page as it starts. */
export const pageLife = 10 * 60 * 1000;

/** Pages older than this, which a window that closed did not remove, are removed when another is written. */
const sweepAge = 60 * 60 * 1000;

/**
 * opensByFile reports whether a sign-in page is handed to openExternal as
 * a file: where openExternal starts an opener with the URL on its command
 * line (desktop VS Code on Linux and the BSDs) and the file is on the
 * machine of the browser (no remote: over SSH, in WSL or a container, the
 * extension's files are on the other machine, and there the URL is opened
 * on the user's own machine as before).
 */
export function opensByFile(desktop: boolean, remoteName: string | undefined, platform: string): boolean {
	return desktop && remoteName === undefined && platform !== 'win32' && platform !== 'darwin';
}

const escape = (s: string) =>
	s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');

/**
 * redirectPage is the page that sends the browser on to target, an http or
 * https URL: a meta refresh and a link, under a policy that loads, runs and
 * submits nothing, with no referrer.
 */
export function redirectPage(target: string): string {
	const u = new URL(target);
	if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.host === '') {
		throw new Error(`only an http or https URL is redirected to, not ${JSON.stringify(target)}`);
	}
	// The URL as sent: URL.href would re-encode what the sidecar escaped.
	const to = escape(target);
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0; url=${to}">
<title>FreeCode: opening the sign-in page</title>
</head>
<body>
<p>Opening the sign-in page… <a href="${to}">Continue</a></p>
</body>
</html>
`;
}

/** privateDir makes dir the user's alone: a directory, not a link, that only its owner enters. */
async function privateDir(dir: string): Promise<void> {
	await fs.mkdir(dir, { recursive: true, mode: 0o700 });
	const st = await fs.lstat(dir);
	if (!st.isDirectory()) {
		throw new Error(`${dir} is not a directory`);
	}
	if ((st.mode & 0o077) !== 0) {
		await fs.chmod(dir, 0o700);
	}
}

/**
 * writeSignInPage writes the page for target into a new file of dir, 0600
 * in a 0700 directory, named at random, and returns its path. Pages left
 * there for an hour are removed first.
 */
export async function writeSignInPage(dir: string, target: string, now = Date.now()): Promise<string> {
	const page = redirectPage(target);
	await privateDir(dir);
	for (const name of await fs.readdir(dir)) {
		if (!name.startsWith('redirect-') || !name.endsWith('.html')) {
			continue;
		}
		const p = path.join(dir, name);
		const st = await fs.lstat(p).catch(() => undefined);
		if (st !== undefined && now - st.mtimeMs > sweepAge) {
			await fs.rm(p, { force: true });
		}
	}
	const file = path.join(dir, `redirect-${randomBytes(16).toString('hex')}.html`);
	// 'wx': a new file, never one already there (it could be a link).
	await fs.writeFile(file, page, { flag: 'wx', mode: 0o600 });
	return file;
}

/** redirectTarget is the URL a page of redirectPage sends the browser to: what a test's browser follows. */
export function redirectTarget(page: string): string | undefined {
	const m = /<meta http-equiv="refresh" content="0; url=([^"]+)">/.exec(page);
	if (m === null) {
		return undefined;
	}
	return m[1].replace(/&#39;/g, "'").replace(/&#34;/g, '"').replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&');
}
