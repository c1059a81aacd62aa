// The rule a server's name must follow, checked before anything is written:
// the same rule the config loader enforces, said the same way. Pure.

/** checkServerName returns why name is not a valid server name, or undefined when it is. */
export function checkServerName(name: string, taken: readonly string[] = []): string | undefined {
	if (name.length === 0) return 'A name is needed.';
	if (name.length > 48) return `At most 48 characters (this one has ${name.length}).`;
	if (!/^[A-Za-z0-9_-]+$/.test(name)) return 'Only letters A–Z a–z, digits, "_" and "-".';
	// "__" separates the parts of a tool id (mcp__<server>__<tool>): a name
	// holding it, or starting or ending with "_", would read two ways.
	if (name.includes('__')) return 'No "__": it separates the parts of a tool id.';
	if (name.startsWith('_') || name.endsWith('_')) return 'It may not start or end with "_".';
	if (taken.includes(name)) return `A server named "${name}" is already configured.`;
	return undefined;
}

/** checkRemoteUrl returns why u is not a URL the sidecar will dial, or undefined. */
export function checkRemoteUrl(u: string): string | undefined {
	let url: URL;
	try {
		url = new URL(u);
	} catch {
		return 'Not a URL (it should look like https://host/mcp).';
	}
	if (url.protocol === 'https:') return undefined;
	if (url.protocol !== 'http:') return 'Use https:// (or http:// to this machine).';
	const host = url.hostname.replace(/^\[|\]$/g, '');
	if (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)) return undefined;
	return 'Plain http:// only reaches this machine (localhost, 127.0.0.1, [::1]); use https:// for other hosts.';
}
