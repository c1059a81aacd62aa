import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRemoteUrl, checkServerName } from '../src/serverName';

const names: [string, string | undefined][] = [
	['fs', undefined],
	['my-server_2', undefined],
	['a'.repeat(48), undefined],
	['', 'A name is needed.'],
	['a'.repeat(49), 'At most 48 characters (this one has 49).'],
	['has space', 'Only letters A–Z a–z, digits, "_" and "-".'],
	['dot.name', 'Only letters A–Z a–z, digits, "_" and "-".'],
	['ünïcode', 'Only letters A–Z a–z, digits, "_" and "-".'],
	['a__b', 'No "__": it separates the parts of a tool id.'],
	['_lead', 'It may not start or end with "_".'],
	['trail_', 'It may not start or end with "_".'],
	['taken', 'A server named "taken" is already configured.'],
];

for (const [name, want] of names) {
	test(`server name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 10)}…(${name.length})` : name)}`, () => {
		assert.equal(checkServerName(name, ['taken']), want);
	});
}

const urls: [string, string | undefined][] = [
	['https://mcp.example.com/mcp', undefined],
	['http://127.0.0.1:3000/mcp', undefined],
	['http://localhost:8080/sse', undefined],
	['http://[::1]:9000/mcp', undefined],
	['http://example.com/mcp', 'Plain http:// only reaches this machine (localhost, 127.0.0.1, [::1]); use https:// for other hosts.'],
	['ftp://example.com', 'Use https:// (or http:// to this machine).'],
	['example.com/mcp', 'Not a URL (it should look like https://host/mcp).'],
];

for (const [u, want] of urls) {
	test(`remote URL ${u}`, () => {
		assert.equal(checkRemoteUrl(u), want);
	});
}
