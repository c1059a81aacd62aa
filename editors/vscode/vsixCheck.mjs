// Checks a packaged .vsix: it holds the bundle, the manifest and the
// sidecar and CLI binaries, the binaries executable (a bit lost in packing
// would leave the extension unable to start its sidecar), and nothing of
// the sources, tests or node_modules.
//
//   node vsixCheck.mjs FILE.vsix

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const yauzl = require('yauzl');
const [file] = process.argv.slice(2);

const entries = await new Promise((resolve, reject) => {
	yauzl.open(file, { lazyEntries: true }, (err, zip) => {
		if (err) return reject(err);
		const out = new Map();
		zip.on('entry', (e) => {
			out.set(e.fileName, e.externalFileAttributes >>> 16);
			zip.readEntry();
		});
		zip.on('end', () => resolve(out));
		zip.on('error', reject);
		zip.readEntry();
	});
});

const problems = [];
for (const need of ['extension/package.json', 'extension/dist/extension.js', 'extension/media/freecode.svg', 'extension/media/icon.png', 'extension/schemas/config.schema.json']) {
	if (!entries.has(need)) problems.push(`${need} is missing`);
}
for (const bin of ['extension/bin/freecode-serve', 'extension/bin/freecode']) {
	const mode = entries.get(bin);
	if (mode === undefined) problems.push(`${bin} is missing`);
	else if ((mode & 0o111) === 0) problems.push(`${bin} is not executable (mode ${mode.toString(8)})`);
}
for (const name of entries.keys()) {
	if (/^extension\/(src|test|out|node_modules|\.e2e-cache|test-output)\//.test(name) || name.endsWith('.map')) {
		problems.push(`${name} should not be packaged`);
	}
}
if (problems.length > 0) {
	console.error(`${file}:\n  ${problems.join('\n  ')}`);
	process.exit(1);
}
console.log(`${file}: ${entries.size} files, the sidecar and the CLI executable`);
