import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
	checkValue,
	entryItems,
	entryName,
	installArgs,
	installedWords,
	maxItems,
	noneWords,
	parseAsked,
	parseEntries,
	runsWords,
	valuePrompt,
	type RegistryEntry,
} from '../src/registryBrowse';

// What `freecode mcp search --json` prints of the fixture registry
// (internal/registry/registrytest).
const searched = JSON.stringify([
	{ name: 'io.example/weather', title: 'Weather', description: 'Forecasts and alerts', version: '1.4.0', runs: ['pypi'] },
	{ name: 'io.example/tickets', description: "Your team's tickets, remotely", version: '2.1.0', status: 'deprecated', runs: ['npm', 'remote'] },
	{ name: 'io.example/dotnet', description: 'A .NET server', version: '0.1.0', runs: ['nuget'] },
	{ note: 'not an entry' },
]);

test('registry: each server is its title, name@version and how it runs, its description below; always shown', () => {
	const items = entryItems(parseEntries(searched));
	assert.deepEqual(
		items.map(({ label, description, detail, alwaysShow }) => ({ label, description, detail, alwaysShow })),
		[
			{ label: 'Weather', description: 'io.example/weather@1.4.0 · PyPI (uvx)', detail: 'Forecasts and alerts', alwaysShow: true },
			{
				label: 'io.example/tickets',
				description: 'io.example/tickets@2.1.0 · npm (npx), remote',
				detail: "deprecated — Your team's tickets, remotely",
				alwaysShow: true,
			},
			{ label: 'io.example/dotnet', description: 'io.example/dotnet@0.1.0 · nuget: not installable by FreeCode yet', detail: 'A .NET server', alwaysShow: true },
		],
	);
	assert.equal(items[0].entry.name, 'io.example/weather');
});

test('registry: a long list is cut; a control character in a name is shown, not obeyed', () => {
	const many: RegistryEntry[] = Array.from({ length: maxItems + 5 }, (_, i) => ({ name: `io.x/s${i}`, description: '', version: '1.0.0', runs: ['npm'] }));
	assert.equal(entryItems(many).length, maxItems);
	const [bad] = entryItems([{ name: 'io.x/a\u001b[2Jb', description: 'd\u0007', version: '1', runs: [] }]);
	assert.doesNotMatch(bad.label + bad.description + bad.detail, /[\u0000-\u001f]/);
	assert.match(bad.description, /no way to run it given/);
});

test('registry: what a search that finds nothing says; output that is not a list is an error', () => {
	assert.equal(noneWords('  zzz '), 'No server matches "zzz".');
	assert.equal(noneWords(''), 'The registry lists no server.');
	assert.throws(() => parseEntries('{}'), /no list/);
	assert.equal(runsWords(['oci', 'mcpb']), 'OCI image (docker)');
});

test("registry: the install's arguments pin the version, ask nothing on the command line and take the values on stdin", () => {
	const e: RegistryEntry = { name: 'io.example/weather', description: '', version: '1.4.0', runs: ['pypi'] };
	assert.deepEqual(installArgs(e, undefined, true), ['mcp', 'install', 'io.example/weather@1.4.0', '--yes', '--list-values']);
	assert.deepEqual(installArgs(e, 'weather-2', false), ['mcp', 'install', 'io.example/weather@1.4.0', '--yes', '--name', 'weather-2', '--values-stdin']);
	assert.equal(entryName('io.example/weather'), 'weather');
	assert.equal(entryName('io.github.owner/my.server_'), 'my-server');
	assert.equal(entryName('plain'), 'plain');
});

test('registry: each value is asked in its own box, a secret unseen and said where it is kept', () => {
	const asked = parseAsked(
		JSON.stringify([
			{ name: 'region', description: 'The region forecast', choices: ['eu', 'us'], default: 'eu' },
			{ name: 'WEATHER_API_KEY', description: 'Your API key', secret: true, default: 'ignored' },
		]),
	);
	assert.deepEqual(valuePrompt('io.example/weather', asked[0], 0, 2), {
		title: 'Install io.example/weather (1/2)',
		prompt: 'region: The region forecast (one of eu, us)',
		value: 'eu',
		password: false,
	});
	const secret = valuePrompt('io.example/weather', asked[1], 1, 2);
	assert.equal(secret.password, true);
	assert.equal(secret.value, '', 'a secret box is never prefilled');
	assert.match(secret.prompt, /^WEATHER_API_KEY: Your API key — a secret, kept in the OS keychain/);
	assert.equal(checkValue({ name: 'x' }, ''), 'x is required.');
	assert.equal(checkValue({ name: 'x', default: 'd' }, ''), undefined);
	assert.equal(checkValue(asked[0], 'mars'), 'Want one of eu, us.');
	assert.equal(checkValue(asked[0], 'us'), undefined);
});

test('registry: the status bar says what was installed short enough not to be cut, the config file by name', () => {
	const out = [
		'✓ Installed io.example/weather 1.4.0 as local server "weather" in /home/me/.freecode/config.json',
		'  command:   uvx mcp-weather==1.4.0 eu',
		'  registry:  io.example/weather@1.4.0',
		'  secret WEATHER_API_KEY saved in the secret store',
		'',
	].join('\n');
	assert.equal(installedWords(out), 'Installed "weather" from io.example/weather@1.4.0 in config.json, 1 secret kept');
	assert.equal(installedWords('✓ Installed io.x/a 1 as remote server "a" in C:\\Users\\me\\.freecode\\config.json\n'), 'Installed "a" from io.x/a@1 in config.json');
	assert.equal(installedWords('✓ Something else\n'), 'Something else');
});
