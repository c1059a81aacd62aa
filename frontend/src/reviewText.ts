// A tool's definition review as the read-only document shows it. Pure: no
// `vscode` import.

import type { ToolReview } from './protocol.gen';
import { printable } from './text';

/** reviewDocument is a tool's review as text: what it is about, then the change, made printable. */
export function reviewDocument(r: ToolReview): string {
	const head = [`// ${printable(r.id)}: ${r.kind === 'new' ? 'a new tool' : 'its definition changed since you accepted it'}`];
	if (r.rejected) head.push('// You rejected this definition: calls of it are denied.');
	if (r.hidden) head.push('// Models are not shown this tool meanwhile: its accepted input schema cannot stand for the new one.');
	head.push('// Removed text is in [-…-], added text in {+…+}; schemas by JSON pointer.', `// hash: ${r.hash}`, '');
	return `${head.join('\n')}${printable(r.diff)}`;
}
