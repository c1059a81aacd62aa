import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RegistryInstallResult, RegistryValue, RegistryValuesResult } from '../../frontend/src/protocol.gen';
import { installedWords } from '../../frontend/src/registryWords';
import { howItRuns, LatestSearch, readValues, resultLines, searchStatus, valueFields, type Schedule } from '../src/registryForm';

/** A clock the test moves: what a Schedule was given runs when advanced past it. */
function clock(): { schedule: Schedule; advance(ms: number): void } {
	let now = 0;
	let timers: { at: number; fn: () => void; live: boolean }[] = [];
	return {
		schedule: (fn, ms) => {
			const t = { at: now + ms, fn, live: true };
			timers.push(t);
			return () => (t.live = false);
		},
		advance(ms) {
			now += ms;
			const due = timers.filter((t) => t.live && t.at <= now);
			timers = timers.filter((t) => !due.includes(t));
			for (const t of due) t.fn();
		},
	};
}

/** A search the test answers by hand, one promise per query sent. */
function searches() {
	const sent: { q: string; resolve(r: string): void; reject(e: Error): void }[] = [];
	return {
		sent,
		search: (q: string) => new Promise<string>((resolve, reject) => sent.push({ q, resolve, reject })),
	};
}

const tick = () => new Promise((r) => setImmediate(r));

test('search: typing is debounced, one request runs at a time, and only the latest query is shown', async () => {
	const c = clock();
	const s = searches();
	const shown: string[] = [];
	const failed: string[] = [];
	const l = new LatestSearch(s.search, (q, r) => shown.push(`${q}=${r}`), (q, e) => failed.push(`${q}:${(e as Error).message}`), c.schedule, 250);
	l.typed('w');
	l.typed('we');
	c.advance(249);
	assert.equal(s.sent.length, 0, 'nothing is sent while typing');
	l.typed('wea');
	c.advance(250);
	assert.deepEqual(s.sent.map((x) => x.q), ['wea'], 'one search, of what was typed last');
	// Typed while it runs: sent once it answers, and its answer alone shown.
	l.typed('weat');
	c.advance(250);
	l.typed('weath');
	c.advance(250);
	assert.equal(s.sent.length, 1, 'one request at a time');
	s.sent[0].resolve('old');
	await tick();
	assert.deepEqual(shown, [], 'a stale answer is not shown');
	assert.deepEqual(s.sent.map((x) => x.q), ['wea', 'weath'], 'the latest query is sent next, the ones between skipped');
	s.sent[1].resolve('new');
	await tick();
	assert.deepEqual(shown, ['weath=new']);
	// A failure is shown too; Enter (now) sends at once.
	l.now('x');
	s.sent[2].reject(new Error('registry down'));
	await tick();
	assert.deepEqual(failed, ['x:registry down']);
	// Once closed, nothing more is sent or shown.
	l.typed('y');
	l.close();
	c.advance(1000);
	assert.equal(s.sent.length, 3);
});

test('results: name@version, title, how it runs, deprecated marked; control characters shown, not obeyed', () => {
	assert.deepEqual(resultLines({ name: 'io.example/weather', title: 'Weather', description: 'Forecasts', version: '1.4.0', runs: ['pypi'] }), {
		head: 'io.example/weather@1.4.0',
		title: 'Weather',
		runs: 'PyPI (uvx)',
		description: 'Forecasts',
		status: '',
	});
	const odd = resultLines({ name: 'io.x/a\u001b[2Jb', description: 'd', version: '1', status: 'deprecated', runs: ['nuget', 'remote'] });
	assert.doesNotMatch(odd.head, /\u001b/);
	assert.equal(odd.status, 'deprecated');
	assert.equal(odd.runs, 'remote');
	assert.equal(searchStatus(' zz ', 0, 0), 'No server matches "zz".');
	assert.equal(searchStatus('', 50, 5000), '50 of 5000 servers shown: type to narrow the search.');
	assert.equal(searchStatus('w', 1, 1), '1 server.');
});

const weather: RegistryValue[] = [
	{ name: 'region', description: 'The region forecast', choices: ['eu', 'us'], default: 'eu' },
	{ name: 'WEATHER_API_KEY', description: 'Your API key', secret: true, default: 'not-shown' },
	{ name: 'WEATHER_ACCOUNT', description: "Your account's id" },
];

test('form: a secret is a password field never prefilled, choices a list with the default chosen, defaults filled', () => {
	const f = valueFields(weather);
	assert.deepEqual(
		f.map((x) => [x.name, x.kind, x.initial, x.choices]),
		[
			['region', 'choice', 'eu', ['eu', 'us']],
			['WEATHER_API_KEY', 'secret', '', []],
			['WEATHER_ACCOUNT', 'text', '', []],
		],
	);
	assert.match(f[1].hint, /a secret: kept in your OS keychain/);
	assert.match(f[0].hint, /default eu/);
	assert.doesNotMatch(f[1].hint, /not-shown/);
});

test('form: the values read back, checked, an empty one taking its default, a secret as typed', () => {
	const f = valueFields(weather);
	assert.deepEqual(readValues(f, new Map([['region', ''], ['WEATHER_API_KEY', ' k 1 '], ['WEATHER_ACCOUNT', ' acct-7 ']])), {
		values: { region: 'eu', WEATHER_API_KEY: ' k 1 ', WEATHER_ACCOUNT: 'acct-7' },
	});
	assert.deepEqual(readValues(f, new Map([['region', 'mars'], ['WEATHER_API_KEY', 'k']])), {
		errors: [
			{ field: 'region', message: 'Want one of eu, us.' },
			{ field: 'WEATHER_ACCOUNT', message: 'WEATHER_ACCOUNT is required.' },
		],
	});
});

test('words: how it runs, and what an install did', () => {
	const v = { runs: 'npm', package: '@modelcontextprotocol/server-everything@2026.8.31' } as RegistryValuesResult;
	assert.equal(howItRuns(v), 'npm (npx): @modelcontextprotocol/server-everything@2026.8.31');
	const r: RegistryInstallResult = {
		name: 'weather',
		scope: 'user',
		type: 'local',
		file: '/home/me/.freecode/config.json',
		registry: { name: 'io.example/weather', version: '1.4.0', url: 'https://registry.example' },
		secrets: 1,
		secretsWhere: '/home/me/.freecode/auth/tokens.json',
	};
	assert.equal(installedWords(r), 'Installed weather from io.example/weather@1.4.0 in config.json, 1 secret kept in tokens.json (only you can read it)');
	assert.equal(
		installedWords({ ...r, scope: 'project', file: '/p/.freecode/settings.json', secrets: 0 }),
		'Installed weather from io.example/weather@1.4.0 in settings.json; a project’s server runs once you approve it',
	);
});
