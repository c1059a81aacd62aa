// The sidecar's lifecycle (src/lifecycle.ts) on real freecode-serve
// processes with the demo server configured: restarts and a stop that
// overlap end with one process running, or none, and the tree filled from
// the one that runs. The headless test (test/lifecycle.test.ts) forces the
// orders that went wrong; this shows real processes come and go as the
// lifecycle says.
//
// Needs FREECODE_BIN, as sidecar.test.ts.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { SidecarLifecycle } from '../../src/lifecycle';
import { ServersModel } from '../../../../frontend/src/model';
import type { Settings } from '../../src/settings';
import { SpawnedClient, until, writeConfig, type Place } from './harness';

const bin = process.env.FREECODE_BIN;
const skip = bin ? false : 'FREECODE_BIN is not set (make vscode-integration sets it to the built binaries)';

let tmp: string;
let place: Place;
let life: SidecarLifecycle;
const model = new ServersModel();
const clients: SpawnedClient[] = [];
const log: string[] = [];
const warnings: string[] = [];

/** stderr is every sidecar's stderr so far, for a wait that fails. */
const stderr = () => clients.map((c, i) => `--- sidecar ${i}\n${c.stderr()}`).join('\n');

function demoConnected(): Promise<void> {
	return until(model, 'demo connected with 7 tools', () => model.server('demo')?.state === 'connected' && model.toolsOf('demo').length === 7, stderr);
}

/** alive is which of the sidecars spawned so far still run. */
const alive = () => clients.flatMap((c, i) => (c.alive ? [i] : []));

before(() => {
	if (skip) return;
	tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'freecode-ext-lifecycle-'));
	const workspace = path.join(tmp, 'workspace');
	fs.mkdirSync(workspace);
	const configPath = path.join(tmp, 'home', '.freecode', 'config.json');
	writeConfig(configPath, [{ name: 'demo', type: 'local', command: [path.join(bin!, 'demo-server'), '--root', workspace] }]);
	place = { bin: bin!, tmp, workspace, configPath };
	const settings: Settings = {
		serverPath: path.join(bin!, 'freecode-serve'),
		serverPathFromSetting: true,
		cliPath: path.join(bin!, 'freecode'),
		configPath,
		trace: 'off',
		argumentChars: 1200,
		problems: [],
	};
	life = new SidecarLifecycle({
		model,
		hooks: { askPermission: async () => ({ decision: 'deny' }), warn: (m) => warnings.push(m) },
		settings: () => settings,
		exists: (p) => fs.existsSync(p),
		newClient: () => {
			const c = new SpawnedClient(place);
			clients.push(c);
			return c;
		},
		log: { info: (m) => log.push(m), warn: (m) => log.push(`warn: ${m}`), error: (m) => log.push(`error: ${m}`) },
	});
});

after(async () => {
	if (skip) return;
	await life.stop();
	assert.deepEqual(alive(), [], 'a sidecar outlived the last stop');
	fs.rmSync(tmp, { recursive: true, force: true });
	assert.deepEqual(warnings, [], 'the sidecar sent something that does not fit the protocol');
	assert.deepEqual(
		log.filter((l) => l.startsWith('warn') || l.startsWith('error')),
		[],
		'the lifecycle logged a problem',
	);
});

test('the lifecycle starts a sidecar, and the tree fills from it', { skip }, async () => {
	await life.start();
	assert.equal(life.state, 'running');
	assert.deepEqual(alive(), [0]);
	await demoConnected();
});

test('two overlapping restarts end with one sidecar running, the last one', { skip }, async () => {
	await Promise.all([life.restart(), life.restart()]);
	assert.equal(life.state, 'running', `sidecars [${alive().join(', ')}] run`);
	assert.deepEqual(alive(), [2]);
	await demoConnected();
	const p = await life.session!.project();
	assert.equal(p.configPath, place.configPath);
});

test('a stop during a restart ends with none running', { skip }, async () => {
	// From one sidecar running, whatever the test before left.
	await life.stop();
	await life.start();
	await demoConnected();
	const pid = model.server('demo')?.pid;
	assert.ok(pid !== undefined, 'the demo server has a pid');
	await Promise.all([life.restart(), life.stop()]);
	assert.equal(life.state, 'stopped', `sidecars [${alive().join(', ')}] run`);
	assert.equal(life.session, undefined);
	assert.deepEqual(alive(), []);
	assert.equal(model.size, 0, 'the tree is empty');
	assert.throws(() => process.kill(pid, 0), /ESRCH/, `the demo server (pid ${pid}) outlived its sidecar`);
});
