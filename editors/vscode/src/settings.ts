// The freecode.* settings, resolved into what the extension runs: which
// sidecar and CLI binaries, which config file, how much tracing. Pure: the
// caller passes the raw values and what it knows of the machine.

import * as path from 'node:path';

/** RawSettings are the values as VS Code's configuration returns them. */
export interface RawSettings {
	serverPath?: unknown;
	cliPath?: unknown;
	configPath?: unknown;
	trace?: unknown;
	argumentChars?: unknown;
}

/** Machine is what resolution needs to know about where it runs. */
export interface Machine {
	extensionPath: string;
	home: string;
	platform: NodeJS.Platform;
	env: Readonly<Record<string, string | undefined>>;
	exists(p: string): boolean;
}

export type Trace = 'off' | 'messages' | 'verbose';

/** Settings are the resolved values. */
export interface Settings {
	/** The sidecar binary to spawn. */
	serverPath: string;
	/** Whether serverPath came from freecode.serverPath (else it is the bundled one). */
	serverPathFromSetting: boolean;
	/** The CLI: a path, or "freecode" to find on PATH. */
	cliPath: string;
	/** freecode.configPath when set: passed to the sidecar and the CLI. */
	configPath?: string;
	trace: Trace;
	argumentChars: number;
	/** Problems with the values, for the log; each setting that had one fell back to its default. */
	problems: string[];
}

export const DEFAULT_ARGUMENT_CHARS = 1200;

function exe(name: string, platform: NodeJS.Platform): string {
	return platform === 'win32' ? `${name}.exe` : name;
}

/** expand replaces a leading ~ and ${userHome} with the home directory. */
export function expand(p: string, home: string): string {
	let out = p.replace(/\$\{userHome\}/g, home);
	if (out === '~') out = home;
	else if (out.startsWith('~/') || out.startsWith('~\\')) out = path.join(home, out.slice(2));
	return out;
}

function pathSetting(name: string, v: unknown, m: Machine, problems: string[]): string | undefined {
	if (v === undefined || v === null) return undefined;
	if (typeof v !== 'string') {
		problems.push(`freecode.${name} must be a string; using the default`);
		return undefined;
	}
	const t = v.trim();
	if (t === '') return undefined;
	const p = expand(t, m.home);
	if (!path.isAbsolute(p)) {
		// A relative path would depend on VS Code's working directory, which
		// nobody chooses: refuse it rather than run something unexpected.
		problems.push(`freecode.${name} must be an absolute path (got "${t}"); using the default`);
		return undefined;
	}
	return p;
}

/** resolveSettings turns the raw settings into Settings. */
export function resolveSettings(raw: RawSettings, m: Machine): Settings {
	const problems: string[] = [];
	const server = pathSetting('serverPath', raw.serverPath, m, problems);
	const bundledServer = path.join(m.extensionPath, 'bin', exe('freecode-serve', m.platform));
	const cli = pathSetting('cliPath', raw.cliPath, m, problems);
	const bundledCli = path.join(m.extensionPath, 'bin', exe('freecode', m.platform));
	const configPath = pathSetting('configPath', raw.configPath, m, problems);

	let trace: Trace = 'off';
	if (raw.trace === 'messages' || raw.trace === 'verbose' || raw.trace === 'off') trace = raw.trace;
	else if (raw.trace !== undefined) problems.push(`freecode.trace.server must be off, messages or verbose; using off`);

	let argumentChars = DEFAULT_ARGUMENT_CHARS;
	if (typeof raw.argumentChars === 'number' && Number.isFinite(raw.argumentChars)) {
		argumentChars = Math.min(20000, Math.max(200, Math.round(raw.argumentChars)));
	} else if (raw.argumentChars !== undefined) {
		problems.push(`freecode.permissionPrompt.argumentChars must be a number; using ${DEFAULT_ARGUMENT_CHARS}`);
	}

	return {
		serverPath: server ?? bundledServer,
		serverPathFromSetting: server !== undefined,
		cliPath: cli ?? (m.exists(bundledCli) ? bundledCli : exe('freecode', m.platform)),
		configPath,
		trace,
		argumentChars,
		problems,
	};
}

/**
 * configFile is the config file the sidecar and the CLI use when the
 * sidecar cannot be asked: the setting, else $FREECODE_CONFIG, else
 * ~/.freecode/config.json.
 */
export function configFile(s: Settings, m: Machine): string {
	if (s.configPath) return s.configPath;
	const env = m.env.FREECODE_CONFIG;
	if (env && env.trim() !== '') return expand(env.trim(), m.home);
	return path.join(m.home, '.freecode', 'config.json');
}

/** cliArgs prefixes a CLI command with --config when a config file is set. */
export function cliArgs(s: Settings, args: readonly string[]): string[] {
	return s.configPath ? ['--config', s.configPath, ...args] : [...args];
}
