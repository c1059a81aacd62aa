// What both frontends say of the MCP Registry's servers and of an install
// from it: how a server runs, what is wrong with a value typed for it, and
// what an install did. The extension's Browse MCP Registry… and the page's
// Install dialog both use them. Pure: no `vscode` import, no DOM.

import type { RegistryInstallResult, RegistryValue } from './protocol.gen';
import { placeWords } from './secrets';
import { printable } from './text';

/** How each way of running is said, with what runs it. */
const runWords: Record<string, string> = {
	npm: 'npm (npx)',
	pypi: 'PyPI (uvx)',
	oci: 'OCI image (docker)',
	remote: 'remote',
};

/** installable reports whether FreeCode installs a server that runs as run. */
export function installable(run: string): boolean {
	return run in runWords;
}

/** runWord says one way of running: "PyPI (uvx)"; a way FreeCode does not install, as the registry names it. */
export function runWord(run: string): string {
	return runWords[run] ?? run;
}

/** runsWords says how a server runs: "npm (npx), remote"; those FreeCode cannot install yet last, so marked. */
export function runsWords(runs: readonly string[]): string {
	const can = runs.filter(installable).map((r) => runWords[r]);
	const cannot = runs.filter((r) => !installable(r));
	if (can.length === 0) return cannot.length > 0 ? `${cannot.join(', ')}: not installable by FreeCode yet` : 'no way to run it given';
	return can.join(', ');
}

/** checkValue is what is wrong with s as the value of v, or undefined (an empty one takes v's default). */
export function checkValue(v: RegistryValue, s: string): string | undefined {
	if (s === '' && !v.default) return `${v.name} is required.`;
	if (v.choices && v.choices.length > 0 && s !== '' && !v.choices.includes(s)) return `Want one of ${v.choices.join(', ')}.`;
	return undefined;
}

/**
 * installedWords says what an install did: "Installed weather from
 * io.example/weather@1.4.0 in config.json, 1 secret kept in the OS
 * keychain", and for a project's entry that it runs once approved.
 */
export function installedWords(r: RegistryInstallResult): string {
	const file = r.file.split(/[\\/]/).pop() || r.file;
	let s = `Installed ${printable(r.name)} from ${printable(r.registry.name)}@${printable(r.registry.version)} in ${printable(file)}`;
	if (r.secrets > 0) s += `, ${r.secrets} secret${r.secrets > 1 ? 's' : ''} kept in ${printable(placeWords(r.secretsWhere ?? 'the secret store'))}`;
	if (r.scope === 'project') s += '; a project’s server runs once you approve it';
	return s;
}
