import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cliArgs, configFile, resolveSettings, type Machine, type RawSettings } from '../src/settings';

function machine(over: Partial<Machine> = {}): Machine {
	return {
		extensionPath: '/ext',
		home: '/home/me',
		platform: 'linux',
		env: {},
		exists: (p) => p === '/ext/bin/freecode',
		...over,
	};
}

const cases: { name: string; raw: RawSettings; m?: Partial<Machine>; want: Record<string, unknown> }[] = [
	{
		name: 'defaults: the bundled binaries',
		raw: {},
		want: { serverPath: '/ext/bin/freecode-serve', serverPathFromSetting: false, cliPath: '/ext/bin/freecode', configPath: undefined, trace: 'off', argumentChars: 1200, problems: [] },
	},
	{
		name: 'empty strings are defaults too; the CLI falls back to PATH when not bundled',
		raw: { serverPath: '  ', cliPath: '', configPath: '' },
		m: { exists: () => false },
		want: { serverPath: '/ext/bin/freecode-serve', serverPathFromSetting: false, cliPath: 'freecode', configPath: undefined, trace: 'off', argumentChars: 1200, problems: [] },
	},
	{
		name: '~ and ${userHome} expand',
		raw: { serverPath: '~/go/bin/freecode-serve', cliPath: '${userHome}/bin/freecode', configPath: '~/cfg.json', trace: 'verbose' },
		want: { serverPath: '/home/me/go/bin/freecode-serve', serverPathFromSetting: true, cliPath: '/home/me/bin/freecode', configPath: '/home/me/cfg.json', trace: 'verbose', argumentChars: 1200, problems: [] },
	},
	{
		name: 'a relative path or a wrong type is refused, with a problem',
		raw: { serverPath: 'bin/freecode-serve', configPath: 42, trace: 'loud', argumentChars: 'many' },
		want: {
			serverPath: '/ext/bin/freecode-serve',
			serverPathFromSetting: false,
			cliPath: '/ext/bin/freecode',
			configPath: undefined,
			trace: 'off',
			argumentChars: 1200,
			problems: [
				'freecode.serverPath must be an absolute path (got "bin/freecode-serve"); using the default',
				'freecode.configPath must be a string; using the default',
				'freecode.trace.server must be off, messages or verbose; using off',
				'freecode.permissionPrompt.argumentChars must be a number; using 1200',
			],
		},
	},
	{
		name: 'argumentChars is clamped',
		raw: { argumentChars: 5 },
		want: { serverPath: '/ext/bin/freecode-serve', serverPathFromSetting: false, cliPath: '/ext/bin/freecode', configPath: undefined, trace: 'off', argumentChars: 200, problems: [] },
	},
	{
		name: 'Windows binaries end in .exe',
		raw: {},
		m: { platform: 'win32', extensionPath: '/ext', exists: () => false },
		want: { serverPath: '/ext/bin/freecode-serve.exe', serverPathFromSetting: false, cliPath: 'freecode.exe', configPath: undefined, trace: 'off', argumentChars: 1200, problems: [] },
	},
];

for (const tc of cases) {
	test(`settings: ${tc.name}`, () => {
		assert.deepEqual(resolveSettings(tc.raw, machine(tc.m)), tc.want);
	});
}

test('settings: the config file is the setting, else $FREECODE_CONFIG, else ~/.freecode/config.json', () => {
	const none = resolveSettings({}, machine());
	assert.equal(configFile(none, machine()), '/home/me/.freecode/config.json');
	assert.equal(configFile(none, machine({ env: { FREECODE_CONFIG: '~/x.json' } })), '/home/me/x.json');
	const set = resolveSettings({ configPath: '/etc/fc.json' }, machine());
	assert.equal(configFile(set, machine({ env: { FREECODE_CONFIG: '/other' } })), '/etc/fc.json');
	assert.deepEqual(cliArgs(set, ['mcp', 'list']), ['--config', '/etc/fc.json', 'mcp', 'list']);
	assert.deepEqual(cliArgs(none, ['mcp', 'list']), ['mcp', 'list']);
});
