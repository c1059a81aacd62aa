import assert from 'node:assert/strict';
import { test } from 'node:test';
import { externalPage } from '../src/externalPage';

test('externalPage: a web page to open outside VS Code, its URL exactly as sent', () => {
	// A sign-in URL's escapes stay as they are: vscode.Uri would decode them.
	const u = 'http://127.0.0.1:4000/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&scope=a%20b';
	assert.equal(externalPage({ uri: u, external: true }), u);
	assert.equal(externalPage({ uri: 'HTTPS://example.com/x', external: true }), 'HTTPS://example.com/x');
});

test('externalPage: anything else is not one', () => {
	assert.equal(externalPage({ uri: 'http://127.0.0.1/authorize' }), undefined);
	assert.equal(externalPage({ uri: 'http://127.0.0.1/authorize', external: false }), undefined);
	assert.equal(externalPage({ uri: 'file:///etc/passwd', external: true }), undefined);
	assert.equal(externalPage({ uri: 'vscode://freecode/x', external: true }), undefined);
});
