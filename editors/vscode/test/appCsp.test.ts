import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appPolicy, origin, viewCaption, withPolicy } from '../src/appCsp';

function directives(policy: string): Record<string, string> {
	return Object.fromEntries(policy.split('; ').map((d) => [d.slice(0, d.indexOf(' ')), d.slice(d.indexOf(' ') + 1)]));
}

test('app policy: nothing declared is the strict default, no network at all', () => {
	for (const csp of [undefined, null, 'https://x.example', ['https://x.example'], {}]) {
		const p = appPolicy(csp);
		assert.deepEqual(directives(p.policy), {
			'default-src': "'none'",
			'script-src': "'unsafe-inline'",
			'style-src': "'unsafe-inline'",
			'img-src': 'data:',
			'media-src': 'data:',
			'font-src': 'data:',
			'connect-src': "'none'",
			'frame-src': "'none'",
			'base-uri': "'none'",
			'object-src': "'none'",
			'form-action': "'none'",
		}, JSON.stringify(csp));
		assert.deepEqual(p.approved, { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
	}
});

test('app policy: each list opens its own kind of load to the origins it names', () => {
	const p = appPolicy({
		connectDomains: ['https://api.example.com', 'wss://live.example.com:8443', 'https://API.example.com/'],
		resourceDomains: ['https://*.cdn.example'],
		frameDomains: ['https://www.youtube.com'],
		baseUriDomains: ['https://base.example'],
	});
	const d = directives(p.policy);
	assert.equal(d['connect-src'], 'https://api.example.com wss://live.example.com:8443');
	assert.equal(d['script-src'], "'unsafe-inline' https://*.cdn.example");
	assert.equal(d['style-src'], "'unsafe-inline' https://*.cdn.example");
	assert.equal(d['img-src'], 'data: https://*.cdn.example');
	assert.equal(d['font-src'], 'data: https://*.cdn.example');
	assert.equal(d['media-src'], 'data: https://*.cdn.example');
	assert.equal(d['frame-src'], 'https://www.youtube.com');
	assert.equal(d['base-uri'], 'https://base.example');
	assert.equal(d['default-src'], "'none'");
	assert.deepEqual(p.approved.connectDomains, ['https://api.example.com', 'wss://live.example.com:8443']);
	assert.deepEqual(p.refused, []);
});

test('app policy: what is not plainly an origin is left out, and said, never spliced into the policy', () => {
	const p = appPolicy({
		connectDomains: [
			'*',
			'https:',
			"'unsafe-eval'",
			'https://ok.example',
			'https://a.example; script-src *',
			'https://a.example https://b.example',
			'https://a.example/path',
			'http://evil.example',
			'ws://127.0.0.1:9000',
			'http://localhost:3000',
			'javascript://x',
			42,
			'https://a.example:99999',
		],
		resourceDomains: 'https://cdn.example',
	});
	assert.deepEqual(p.approved.connectDomains, ['https://ok.example', 'ws://127.0.0.1:9000', 'http://localhost:3000']);
	assert.equal(directives(p.policy)['connect-src'], 'https://ok.example ws://127.0.0.1:9000 http://localhost:3000');
	assert.equal(p.refused.length, 11, p.refused.join('\n'));
	assert.ok(p.refused.includes('resourceDomains: not a list'));
	assert.ok(p.refused.some((r) => r.startsWith('connectDomains: "http://evil.example": http: only to this machine')));
	assert.ok(!p.policy.includes('unsafe-eval') && !p.policy.includes('*;') && !p.policy.includes('b.example'));
	// One directive per kind, each once: nothing the view sent added one.
	assert.equal(p.policy.split('; ').length, 11);
});

test('app policy: origin normalises case and a trailing slash, and refuses a wildcard over plain http', () => {
	assert.deepEqual(origin(' HTTPS://Example.COM/ '), { ok: 'https://example.com' });
	assert.deepEqual(origin('https://[2001:db8::1]:443'), { ok: 'https://[2001:db8::1]:443' });
	assert.ok('refused' in origin('http://*.localhost'));
	assert.ok('refused' in origin(null));
});

test('app policy: withPolicy puts the policy first in the head, else after the doctype, else first', () => {
	const pol = "default-src 'none'";
	const meta = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'">`;
	assert.equal(withPolicy('<!doctype html><html><HEAD lang="x"><script>1</script></head></html>', pol), `<!doctype html><html><HEAD lang="x">${meta}<script>1</script></head></html>`);
	assert.equal(withPolicy('<!DOCTYPE html><p>hi', pol), `<!DOCTYPE html>${meta}<p>hi`);
	assert.equal(withPolicy('<p>hi', pol), `${meta}<p>hi`);
	// <header> is not <head>.
	assert.equal(withPolicy('<header>x</header>', pol), `${meta}<header>x</header>`);
	assert.ok(withPolicy('<p>', 'a "b" &c').includes('content="a &quot;b&quot; &amp;c"'));
});

test('app policy: a view of a server sandboxed without network, as the sidecar passes it on, names no outside origin, and its caption says what was left out', async () => {
	const { viewOf } = await import('../src/appPage');
	const uri = 'ui://test/view.html';
	// What freecode/resources/read gives for a "network": "none" server
	// whose view asked for https://exfil.example (mcp.keepViewInSandbox).
	const view = viewOf(
		{
			contents: [
				{
					uri,
					mimeType: 'text/html;profile=mcp-app',
					text: '<html></html>',
					_meta: {
						ui: { csp: { connectDomains: [], resourceDomains: [] } },
						'freecode/viewReach': {
							dropped: [
								"connectDomains: https://exfil.example: outside the server's sandbox, which has no network (\"network\": \"none\")",
								"resourceDomains: https://*.exfil.example: outside the server's sandbox, which has no network (\"network\": \"none\")",
							],
						},
					},
				},
			],
		},
		uri,
	);
	assert.ok(!('error' in view));
	const p = appPolicy(view.csp);
	assert.ok(!p.policy.includes('exfil'), p.policy);
	assert.equal(directives(p.policy)['connect-src'], "'none'");
	assert.equal(
		viewCaption(uri, 'repo', p.approved, view.dropped),
		"ui://test/view.html from repo · sandboxed · network: none · left out, beyond repo's sandbox: https://exfil.example, https://*.exfil.example",
	);
});
