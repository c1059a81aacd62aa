// Builds the page's script, web/static/app.js, from web/src/main.ts and the
// TypeScript both frontends share that it imports (frontend/src), with the
// extension's own esbuild and vscode-jsonrpc (editors/vscode/node_modules,
// `make vscode` installs them). The bundle is committed, since `go install`
// embeds web/static as it is; so:
//
//   node web/build.mjs           writes web/static/app.js
//   node web/build.mjs --check   fails when the committed bundle is not what the sources build
//   node web/build.mjs --tests   builds web/test/*.test.ts into web/out/test for node --test
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = dirname(fileURLToPath(import.meta.url));
const modules = join(webDir, '..', 'editors', 'vscode', 'node_modules');
const esbuild = createRequire(join(modules, '..', 'package.json'))('esbuild');
const outfile = join(webDir, 'static', 'app.js');

const page = {
	entryPoints: [join(webDir, 'src', 'main.ts')],
	bundle: true,
	platform: 'browser',
	format: 'esm',
	target: 'es2022',
	minify: true,
	legalComments: 'eof',
	nodePaths: [modules],
	logLevel: 'warning',
};

if (process.argv.includes('--tests')) {
	const dir = join(webDir, 'test');
	await esbuild.build({
		entryPoints: readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => join(dir, f)),
		bundle: true,
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		outdir: join(webDir, 'out', 'test'),
		nodePaths: [modules],
		logLevel: 'warning',
	});
} else if (process.argv.includes('--check')) {
	const built = await esbuild.build({ ...page, write: false, outfile });
	const want = Buffer.from(built.outputFiles[0].contents);
	let have;
	try {
		have = readFileSync(outfile);
	} catch {
		have = Buffer.alloc(0);
	}
	if (!want.equals(have)) {
		console.error(`web/static/app.js is stale: it is not what web/src and frontend/src build now (${have.length} bytes committed, ${want.length} built). Run 'make web' and commit it.`);
		process.exit(1);
	}
} else {
	await esbuild.build({ ...page, outfile });
}
