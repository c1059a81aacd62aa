// Bundles the extension (src/extension.ts → dist/extension.js) and, with
// --tests, each headless test (test/**/*.test.ts → out/**). `vscode` stays
// external in both: VS Code provides it to the extension, and a test whose
// module graph reaches it fails to load, which is how the pure modules are
// kept free of it.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

const common = {
	bundle: true,
	platform: 'node',
	format: 'cjs',
	target: 'node20',
	external: ['vscode'],
	logLevel: 'warning',
};

if (tests) {
	for (const dir of ['test', 'test/integration']) {
		const entryPoints = readdirSync(dir)
			.filter((f) => f.endsWith('.test.ts'))
			.map((f) => join(dir, f));
		await esbuild.build({
			...common,
			entryPoints,
			outdir: dir === 'test' ? 'out/test' : 'out/integration',
			sourcemap: 'inline',
		});
	}
} else {
	await esbuild.build({
		...common,
		entryPoints: ['src/extension.ts'],
		outfile: 'dist/extension.js',
		minify: production,
		sourcemap: production ? false : 'linked',
	});
}
