// Bundles the extension (src/extension.ts → dist/extension.js) and, with
// --tests, each headless test (test/**/*.test.ts → out/**). `vscode` stays
// external in both: VS Code provides it to the extension, and a test whose
// module graph reaches it fails to load, which is how the pure modules are
// kept free of it. The TypeScript both frontends share (../../frontend) has
// no node_modules of its own: its imports (vscode-jsonrpc) resolve here.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

const common = {
	bundle: true,
	platform: 'node',
	format: 'cjs',
	target: 'node20',
	external: ['vscode'],
	nodePaths: [join(dirname(fileURLToPath(import.meta.url)), 'node_modules')],
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
