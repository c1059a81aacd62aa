// A resource read and a prompt got, as the read-only documents the
// extension opens for them (its readOnlyDocs.ts) and the page shows. Pure:
// no `vscode` import.

import type { ContentBlock, GetPromptResult, ReadResourceResult } from './protocol.gen';
import { printable } from './text';

/** Doc is a read-only document: its name under freecode:/ (whose extension picks the language) and its text. */
export interface Doc {
	name: string;
	content: string;
}

const extensions: Record<string, string> = {
	'text/markdown': 'md',
	'application/json': 'json',
	'text/html': 'html',
	'text/css': 'css',
	'text/javascript': 'js',
	'application/javascript': 'js',
	'text/x-python': 'py',
	'application/xml': 'xml',
	'text/xml': 'xml',
	'application/yaml': 'yaml',
	'text/yaml': 'yaml',
	'text/csv': 'csv',
};

/** safeName turns text into one path segment: no separators, nothing unprintable. */
function safeName(s: string): string {
	const out = s.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '');
	return out.slice(0, 80) || 'unnamed';
}

function lastSegment(uri: string): string {
	const path = uri.replace(/[?#].*$/, '').replace(/\/+$/, '');
	return path.slice(path.lastIndexOf('/') + 1) || path;
}

/**
 * resourceDoc is what a resource read shows: its text parts as they are, a
 * binary part as a line that says what it is. A single text part of a
 * known type keeps its language.
 */
export function resourceDoc(server: string, uri: string, r: ReadResourceResult): Doc {
	const parts = r.contents ?? [];
	let base = safeName(lastSegment(uri));
	const only = parts.length === 1 ? parts[0] : undefined;
	const ext = only?.mimeType ? extensions[only.mimeType.split(';')[0].trim()] : undefined;
	if (ext && !base.endsWith(`.${ext}`)) base += `.${ext}`;
	else if (!ext && !/\.(txt|md|json)$/.test(base)) base += '.txt';
	const content = parts
		.map((c) => {
			if (typeof c.text === 'string') return parts.length === 1 ? c.text : `--- ${c.uri}${c.mimeType ? ` (${c.mimeType})` : ''}\n${c.text}`;
			const bytes = typeof c.blob === 'string' ? Math.floor((c.blob.replace(/=+$/, '').length * 3) / 4) : 0;
			return `[${c.uri}: ${bytes} bytes of ${c.mimeType ?? 'binary data'}, not shown]`;
		})
		.join('\n\n');
	return { name: `resources/${safeName(server)}/${base}`, content: parts.length === 0 ? '(the resource is empty)' : content };
}

function contentText(c: ContentBlock): string {
	if (c.type === 'text' && typeof c.text === 'string') return c.text;
	if (c.type === 'resource' && typeof c.resource === 'object' && c.resource !== null) {
		const res = c.resource as { uri?: unknown; text?: unknown };
		if (typeof res.text === 'string') return `Resource ${String(res.uri)}:\n\n${res.text}`;
		return `[resource ${String(res.uri)}]`;
	}
	if (c.type === 'resource_link') return `[resource link ${String(c.uri)}]`;
	return `[${c.type}${typeof c.mimeType === 'string' ? ` ${c.mimeType}` : ''}]`;
}

/** promptDoc is a prompt got: its description, then each message under its role, in Markdown. */
export function promptDoc(server: string, name: string, r: GetPromptResult, args: Record<string, string>): Doc {
	const lines = [`# ${printable(name)} (${printable(server)})`, ''];
	if (r.description) lines.push(printable(r.description), '');
	const given = Object.entries(args);
	if (given.length > 0) lines.push(`Arguments: ${given.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}`, '');
	for (const m of r.messages ?? []) lines.push(`## ${m.role}`, '', printable(contentText(m.content)), '');
	return { name: `prompts/${safeName(server)}/${safeName(name)}.md`, content: lines.join('\n') };
}
