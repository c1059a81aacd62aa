// Fails when the modules under the directories import each other in a
// circle. Type-only imports count: a cycle of types is still two modules
// that each need the other, which is how a model ends up living in a view.
// Every relative import must resolve to a file under one of the
// directories, so that a directory given alone may import nothing outside
// it; a package (vscode, node:fs) is outside the graph. `npm test` runs it
// on the shared package alone (../../frontend/src: it imports no
// frontend), then on src/ with it; `make web-test` on web/src with it.
//
//   node importCycles.mjs DIR...

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const require = createRequire(import.meta.url);
const ts = require('typescript');

const roots = process.argv.slice(2);
if (roots.length === 0) {
	console.error('usage: node importCycles.mjs DIR...');
	process.exit(2);
}
const tops = roots.map((r) => path.resolve(r));
const under = (p) => tops.some((t) => p.startsWith(t + path.sep));
const root = roots.join(' ');

/** sources lists the .ts files under dir, sorted so the output is stable. */
function sources(dir) {
	const out = [];
	for (const name of readdirSync(dir).sort()) {
		const p = path.join(dir, name);
		if (statSync(p).isDirectory()) out.push(...sources(p));
		else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
	}
	return out;
}

/** resolve finds the file a relative specifier names, as the bundler would. */
function resolve(from, spec) {
	const base = path.resolve(path.dirname(from), spec);
	for (const p of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
		try {
			if (statSync(p).isFile()) return p;
		} catch {
			// not this one
		}
	}
	return undefined;
}

const rel = (p) => path.relative(tops.length === 1 ? tops[0] : process.cwd(), p).split(path.sep).join('/');
const files = tops.flatMap(sources);
const edges = new Map();
const problems = [];
let imports = 0;
for (const f of files) {
	// preProcessFile reads every import, export-from, import type and
	// import() without type-checking, so it needs no tsconfig.
	const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true);
	const to = new Set();
	for (const { fileName: spec } of info.importedFiles) {
		if (!spec.startsWith('.')) continue;
		const target = resolve(f, spec);
		if (!target || !under(target)) {
			problems.push(`${rel(f)} imports ${spec}, which is not a file under ${root}`);
			continue;
		}
		to.add(target);
	}
	imports += to.size;
	edges.set(f, [...to].sort());
}

// Tarjan's strongly connected components: a component of more than one
// file, or a file importing itself, holds a cycle.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let next = 0;
function visit(v) {
	index.set(v, next);
	low.set(v, next);
	next++;
	stack.push(v);
	onStack.add(v);
	for (const w of edges.get(v)) {
		if (!index.has(w)) {
			visit(w);
			low.set(v, Math.min(low.get(v), low.get(w)));
		} else if (onStack.has(w)) {
			low.set(v, Math.min(low.get(v), index.get(w)));
		}
	}
	if (low.get(v) !== index.get(v)) return;
	const c = [];
	let w;
	do {
		w = stack.pop();
		onStack.delete(w);
		c.push(w);
	} while (w !== v);
	if (c.length > 1 || edges.get(v).includes(v)) components.push(c);
}
for (const f of files) if (!index.has(f)) visit(f);

/** loop is the shortest way from the component's first file back to it, within the component. */
function loop(c) {
	const inside = new Set(c);
	const start = [...c].sort()[0];
	const prev = new Map();
	const queue = [start];
	for (let i = 0; i < queue.length; i++) {
		for (const w of edges.get(queue[i])) {
			if (!inside.has(w)) continue;
			if (w === start) {
				const way = [];
				for (let v = queue[i]; v !== start; v = prev.get(v)) way.push(v);
				return [start, ...way.reverse(), start];
			}
			if (!prev.has(w)) {
				prev.set(w, queue[i]);
				queue.push(w);
			}
		}
	}
	return [start, start];
}

for (const c of components) {
	const files = c.length > 2 ? ` (${c.length} files: ${c.map(rel).sort().join(', ')})` : '';
	problems.push(`import cycle: ${loop(c).map(rel).join(' → ')}${files}`);
}
if (problems.length > 0) {
	console.error(`${root}:\n  ${problems.join('\n  ')}`);
	process.exit(1);
}
console.log(`${root}: ${files.length} files, ${imports} imports between them, no cycle`);
