// Where the running editor keeps VS Code's MCP servers, for Import MCP
// Servers: its own user mcp.json (next to its globalStorage, so code-server's
// and a desktop VS Code's alike, whichever runs), the desktop VS Code's
// default one, code-server's default one, and each workspace folder's
// .vscode/mcp.json. Only those that exist are offered; with none, a file
// picker. Pure: no `vscode` import; the caller says what exists.

import * as path from 'node:path';

export interface Where {
	/** The extension's globalStorage directory: <user data>/User/globalStorage/<extension id>. */
	globalStorage: string;
	home: string;
	platform: NodeJS.Platform;
	env: Readonly<Record<string, string | undefined>>;
	/** The workspace folders' paths. */
	folders: readonly string[];
	exists(p: string): boolean;
}

export interface Source {
	label: string;
	path: string;
}

function desktopUserDir(w: Where): string {
	switch (w.platform) {
		case 'darwin':
			return path.join(w.home, 'Library', 'Application Support', 'Code', 'User');
		case 'win32':
			return path.join(w.env.APPDATA ?? path.join(w.home, 'AppData', 'Roaming'), 'Code', 'User');
		default:
			return path.join(w.env.XDG_CONFIG_HOME || path.join(w.home, '.config'), 'Code', 'User');
	}
}

/** vscodeSources lists the VS Code mcp.json files there are, this editor's first, each once. */
export function vscodeSources(w: Where): Source[] {
	const all: Source[] = [
		{ label: "This editor's user MCP servers", path: path.join(w.globalStorage, '..', '..', 'mcp.json') },
		...w.folders.map((f) => ({ label: `Workspace ${path.basename(f)}`, path: path.join(f, '.vscode', 'mcp.json') })),
		{ label: 'VS Code (desktop)', path: path.join(desktopUserDir(w), 'mcp.json') },
		{
			label: 'code-server',
			path: path.join(w.env.XDG_DATA_HOME || path.join(w.home, '.local', 'share'), 'code-server', 'User', 'mcp.json'),
		},
	];
	const seen = new Set<string>();
	return all
		.map((s) => ({ ...s, path: path.normalize(s.path) }))
		.filter((s) => {
			if (seen.has(s.path) || !w.exists(s.path)) return false;
			seen.add(s.path);
			return true;
		});
}

/** A file's problems as freecode/config/problems tells them (model.ts's FileProblems). */
export interface ProblemsOf {
	path: string;
	problems: readonly { key?: string; message: string }[];
}

/** OwnConfig is FreeCode's config file saved in another client's shape, and the client whose import converts it. */
export interface OwnConfig {
	path: string;
	client: string;
}

/** The keys of the sidecar's problem for another client's server map in the config file (config/shapes.go). */
const otherShapeKeys = new Set(['servers', 'mcpServers', 'mcp.servers']);

/**
 * ownConfigToImport finds FreeCode's config file saved in another client's
 * shape (VS Code's mcp.json or Claude's pasted over it): the sidecar tells
 * it as a problem at the other client's key, naming the import that turns
 * the file into FreeCode's, `freecode mcp import <client> <the file>`,
 * which Import MCP Servers then offers as This Config File.
 */
export function ownConfigToImport(files: readonly ProblemsOf[]): OwnConfig | undefined {
	for (const f of files) {
		for (const p of f.problems) {
			const m = /`freecode mcp import ([a-z-]+) /.exec(p.message);
			if (m && p.key !== undefined && otherShapeKeys.has(p.key)) return { path: f.path, client: m[1] };
		}
	}
	return undefined;
}

/**
 * ownConfigWords describes This Config File in the import's picker: the
 * shape it is in first, then its path, which the picker cuts when it is
 * long ("~/.freecode/config.json, in another client's …" said nothing).
 */
export function ownConfigWords(own: OwnConfig, kinds: readonly { label: string; client: string }[]): string {
	const client = kinds.find((k) => k.client === own.client)?.label;
	return `${client ? `in ${client}'s shape` : "in another client's shape"}, to convert to FreeCode's: ${own.path}`;
}

/**
 * droppedServers are the servers of the user's config that run now (the
 * sidecar keeps the last good config while the file is in another
 * client's shape) and that the file to convert no longer holds: pasting
 * the other client's file replaced them, and converting it keeps the file
 * as it is, so they would stop. preview is the CLI's dry run, which lists
 * each server of the file on a line of its own ("  + name (local)",
 * "  = name: already configured, skipped").
 */
export function droppedServers(running: readonly string[], preview: string): string[] {
	const inFile = new Set<string>();
	for (const line of preview.split('\n')) {
		const m = /^\s+[+=!] (.+?)(?: \(| *:|$)/.exec(line);
		if (m) inFile.add(m[1]);
	}
	return running.filter((n) => !inFile.has(n));
}
