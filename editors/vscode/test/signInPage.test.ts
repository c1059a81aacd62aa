import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { opensByFile, redirectPage, redirectTarget, writeSignInPage } from '../src/signInPage';

test('opensByFile: a file where openExternal puts the URL on a command line, on the browser\'s machine', () => {
	assert.equal(opensByFile(true, undefined, 'linux'), true);
	assert.equal(opensByFile(true, undefined, 'freebsd'), true);
	// Over SSH, in WSL or a container the file would be on another machine.
	assert.equal(opensByFile(true, 'ssh-remote', 'linux'), false);
	assert.equal(opensByFile(true, 'wsl', 'linux'), false);
	// In a browser (code-server, vscode.dev) the page is opened by the browser itself.
	assert.equal(opensByFile(false, undefined, 'linux'), false);
	// macOS and Windows hand the URL to the system without a command line.
	assert.equal(opensByFile(true, undefined, 'darwin'), false);
	assert.equal(opensByFile(true, undefined, 'win32'), false);
});

test('writeSignInPage: a 0600 page in a 0700 directory that sends the browser on to the URL as sent', async () => {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'signin-page-'));
	try {
		const dir = path.join(tmp, 'browser');
		const u = 'http://127.0.0.1:4000/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&state=a"b<c>&scope=a%20b';
		const file = await writeSignInPage(dir, u);
		assert.match(path.basename(file), /^redirect-[0-9a-f]{32}\.html$/);
		assert.equal(fs.statSync(file).mode & 0o777, 0o600);
		assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
		const page = fs.readFileSync(file, 'utf8');
		assert.equal(redirectTarget(page), u);
		assert.ok(!page.includes('<script'), page);
		assert.ok(!page.includes('a"b'), page);
		assert.ok(page.includes(`content="default-src 'none'; base-uri 'none'; form-action 'none'"`), page);

		// An hour-old page is swept, a fresh one kept; the directory is made the user's alone again.
		const old = path.join(dir, 'redirect-old.html');
		fs.writeFileSync(old, '');
		const then = new Date(Date.now() - 2 * 60 * 60 * 1000);
		fs.utimesSync(old, then, then);
		fs.chmodSync(dir, 0o755);
		const second = await writeSignInPage(dir, u);
		assert.ok(!fs.existsSync(old));
		assert.ok(fs.existsSync(file) && fs.existsSync(second));
		assert.equal(fs.statSync(dir).mode & 0o777, 0o700);

		// A link in the directory's place is refused.
		const link = path.join(tmp, 'link');
		fs.symlinkSync(dir, link);
		await assert.rejects(writeSignInPage(link, u));
	} finally {
		fs.rmSync(tmp, { recursive: true, force: true });
	}
});

test('redirectPage: only an http or https URL', () => {
	for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'vscode://x/y']) {
		assert.throws(() => redirectPage(bad));
	}
});
