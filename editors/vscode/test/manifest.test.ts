import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test("manifest: the config file and a project's settings are validated with the schema the Go side ships, and open as JSON with comments", () => {
	const [v] = pkg.contributes.jsonValidation;
	assert.deepEqual(v.fileMatch, ['**/.freecode/config.json', '**/.freecode/settings.json']);
	const schema = JSON.parse(readFileSync(join(root, v.url), 'utf8'));
	assert.equal(schema.type, 'object');
	const jsonc = pkg.contributes.languages.find((l: { id: string }) => l.id === 'jsonc');
	for (const f of v.fileMatch) assert.ok(jsonc.filenamePatterns.includes(f), f);
});

test('manifest: every command a menu names is contributed', () => {
	const ids = new Set(pkg.contributes.commands.map((c: { command: string }) => c.command));
	for (const [where, items] of Object.entries(pkg.contributes.menus) as [string, { command: string }[]][]) {
		for (const i of items) assert.ok(ids.has(i.command), `${where}: ${i.command}`);
	}
	assert.ok(existsSync(join(root, 'media', 'freecode.svg')));
});
