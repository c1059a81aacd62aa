import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appPolicy, withPolicy } from '../src/appCsp';
import { APP_MIME, appPage, isAppMime, viewOf } from '../src/appPage';

const uri = 'ui://demo/files.html';

test('app page: the view is the contents of its uri, of the app mime type, text or base64', () => {
	const html = '<!doctype html><p>files</p>';
	assert.deepEqual(viewOf({ contents: [{ uri, mimeType: APP_MIME, text: html }] }, uri), { html, csp: undefined });
	assert.deepEqual(
		viewOf({ contents: [{ uri: 'ui://demo/other', mimeType: 'text/plain', text: 'no' }, { uri, mimeType: 'Text/HTML; profile=mcp-app', blob: Buffer.from(html).toString('base64'), _meta: { ui: { csp: { connectDomains: ['https://a.example'] } } } }] }, uri),
		{ html, csp: { connectDomains: ['https://a.example'] } },
	);
	assert.deepEqual(viewOf({ contents: [{ uri, mimeType: 'text/html', text: html }] }, uri), { error: `${uri} is text/html, not ${APP_MIME}: not a view to render` });
	assert.deepEqual(viewOf({ contents: [] }, uri), { error: `${uri} has no contents` });
	assert.deepEqual(viewOf({ contents: [{ uri, mimeType: APP_MIME }] }, uri), { error: `${uri} has neither text nor blob` });
	assert.equal(isAppMime(undefined), false);
	assert.equal(isAppMime('text/html;profile=mcp-app-x'), false);
});

test('app page: the view runs in a frame with scripts and nothing else, under its policy, and cannot break out of it', () => {
	const evil = `<!doctype html><head><script>acquireVsCodeApi()</script></head>"></iframe><script>parent.x=1</script><a href="command:workbench.action.terminal.new">t</a>`;
	const { policy } = appPolicy(undefined);
	const page = appPage({ html: withPolicy(evil, policy), policy, caption: 'ui://demo/files.html from demo <b>' });
	// The page's policy is the view's: a frame written inline inherits it.
	assert.ok(page.includes(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline';`));
	const frames = page.match(/<iframe [^>]*>/g) ?? [];
	assert.equal(frames.length, 1, 'one frame; the view\'s own "</iframe> did not end it');
	assert.match(frames[0], / sandbox="allow-scripts" /);
	assert.doesNotMatch(frames[0], /allow-same-origin|allow-forms|allow-popups|allow-top-navigation|allow-modals/);
	assert.match(frames[0], / allow="" /);
	// Everything of the view is inside srcdoc, escaped: the one script of the page is its own.
	assert.equal(page.split('<script>').length - 1, 1);
	assert.ok(frames[0].includes('srcdoc="&lt;!doctype html&gt;&lt;head&gt;&lt;meta http-equiv=&quot;Content-Security-Policy&quot;'));
	assert.ok(page.includes('ui://demo/files.html from demo &lt;b&gt;'));
	// The page script hands the frame's messages on and never the API object itself.
	assert.match(page, /const host = acquireVsCodeApi\(\);/);
	assert.doesNotMatch(page, /postMessage\(host|toApp: host|\bhost\b[^;]*contentWindow/);
});
