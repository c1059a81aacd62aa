// The Content-Security-Policy an MCP Apps view (SEP-1865) runs under,
// built from what its resource declares in _meta.ui.csp. Strict by
// default: inline script and style, data: images and media, and nothing
// from the network; each list the view declares opens one kind of load to
// the origins it names, and only to origins that are plainly origins. Pure:
// no `vscode` import, so a web page can build the same policy.

/** The four lists of _meta.ui.csp, as a host approved them. */
export interface AppCsp {
	/** fetch, XHR, WebSocket: connect-src. */
	connectDomains: string[];
	/** scripts, styles, images, fonts, media: script-src, style-src, img-src, font-src, media-src. */
	resourceDomains: string[];
	/** nested frames: frame-src. */
	frameDomains: string[];
	/** <base href>: base-uri. */
	baseUriDomains: string[];
}

export interface AppPolicy {
	/** The policy, one line, for a <meta http-equiv> or a header. */
	policy: string;
	/** The origins let through, by list: what the host tells the view it approved. */
	approved: AppCsp;
	/** Each entry left out, with why: "resourceDomains: 'unsafe-eval' is not an origin". */
	refused: string[];
}

const lists = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'] as const;

// scheme://host[:port], the host a DNS name (a leading "*." for its
// subdomains), an IPv4 address or a bracketed IPv6 one. Nothing else is a
// source expression a view gets: no bare scheme ("https:"), no "*", no
// keyword, no path, nothing that could end the directive (";", ",", space).
const originPattern = /^(https|wss|http|ws):\/\/(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?\/?$/;

/** Plain http and ws carry what they load in clear: only to this machine. */
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * origin checks one entry of a list and returns it as a source expression
 * (lower-cased, no trailing slash), or why it is refused.
 */
export function origin(entry: unknown): { ok: string } | { refused: string } {
	if (typeof entry !== 'string') return { refused: `${JSON.stringify(entry) ?? String(entry)} is not a string` };
	const s = entry.trim().toLowerCase();
	const m = originPattern.exec(s);
	if (!m) return { refused: `${JSON.stringify(entry)} is not an origin (scheme://host[:port], https or wss)` };
	const [, scheme, wildcard, host, port] = m;
	if ((scheme === 'http' || scheme === 'ws') && (wildcard || !loopbackHosts.has(host))) {
		return { refused: `${JSON.stringify(entry)}: ${scheme}: only to this machine (localhost, 127.0.0.1, [::1]); use ${scheme}s` };
	}
	if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return { refused: `${JSON.stringify(entry)}: port ${port} is out of range` };
	return { ok: `${scheme}://${wildcard ?? ''}${host}${port !== undefined ? `:${port}` : ''}` };
}

/**
 * appPolicy builds the view's policy from its resource's _meta.ui.csp (the
 * `csp` object; anything else, or nothing, is the strict default).
 */
export function appPolicy(csp: unknown): AppPolicy {
	const approved: AppCsp = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };
	const refused: string[] = [];
	const declared = csp !== null && typeof csp === 'object' && !Array.isArray(csp) ? (csp as Record<string, unknown>) : {};
	for (const key of lists) {
		const v = declared[key];
		if (v === undefined) continue;
		if (!Array.isArray(v)) {
			refused.push(`${key}: not a list`);
			continue;
		}
		for (const entry of v) {
			const o = origin(entry);
			if ('refused' in o) refused.push(`${key}: ${o.refused}`);
			else if (!approved[key].includes(o.ok)) approved[key].push(o.ok);
		}
	}
	const src = (base: string[], extra: string[]) => [...base, ...extra].join(' ') || "'none'";
	const res = approved.resourceDomains;
	const directives = [
		"default-src 'none'",
		`script-src ${src(["'unsafe-inline'"], res)}`,
		`style-src ${src(["'unsafe-inline'"], res)}`,
		`img-src ${src(['data:'], res)}`,
		`media-src ${src(['data:'], res)}`,
		`font-src ${src(['data:'], res)}`,
		`connect-src ${src([], approved.connectDomains)}`,
		`frame-src ${src([], approved.frameDomains)}`,
		`base-uri ${src([], approved.baseUriDomains)}`,
		"object-src 'none'",
		"form-action 'none'",
	];
	return { policy: directives.join('; '), approved, refused };
}

/**
 * withPolicy puts the policy in the view's own document as well, as the
 * first thing of its <head> (else of the document), so that it holds
 * wherever the document is loaded.
 */
export function withPolicy(html: string, policy: string): string {
	const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}">`;
	const head = /<head(\s[^>]*)?>/i.exec(html);
	if (head) {
		const at = head.index + head[0].length;
		return html.slice(0, at) + meta + html.slice(at);
	}
	const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
	if (doctype) return doctype[0] + meta + html.slice(doctype[0].length);
	return meta + html;
}

/**
 * viewCaption is the line above a view: whose it is, what its page may
 * reach and load, and what FreeCode left out of what it declared (dropped:
 * "key: origin: why", origins beyond its server's sandbox).
 */
export function viewCaption(uri: string, server: string, approved: AppCsp, dropped: string[] = []): string {
	let s = `${uri} from ${server} · sandboxed · network: ${approved.connectDomains.join(', ') || 'none'}`;
	if (approved.resourceDomains.length > 0) s += ` · loads from: ${approved.resourceDomains.join(', ')}`;
	if (dropped.length > 0) {
		const origins = [...new Set(dropped.map((d) => d.split(': ')[1] ?? d))];
		s += ` · left out, beyond ${server}'s sandbox: ${origins.join(', ')}`;
	}
	return s;
}
