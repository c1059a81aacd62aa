// What an MCP Apps view becomes in a webview: its HTML taken out of the
// ui:// resource as read, and the page the webview shows, which holds the
// view in a sandboxed frame and moves its messages. The view's frame has
// scripts and nothing else (no same origin, so neither the page, its
// acquireVsCodeApi nor anything of the workspace is within its reach; no
// forms, popups or navigation of the page), and both the page and the view
// run under the view's policy (appCsp.ts), which a frame written inline
// inherits in any case. Pure: no `vscode` import.

import { Buffer } from 'node:buffer';
import { themeScript } from './appTheme';
import type { ReadResourceResult, ResourceContents } from '../../../frontend/src/protocol.gen';

/** The one mime type of a view (SEP-1865). */
export const APP_MIME = 'text/html;profile=mcp-app';

/** The page's messages with the extension: what the view posts, the editor's theme, and what the view is sent. */
export type PageMessage = { app: unknown } | { theme: unknown };
export type HostMessage = { toApp: unknown } | { size: { width?: number; height?: number } };

export interface View {
	html: string;
	/** The content's _meta.ui.csp as FreeCode passed it on; undefined: none. */
	csp: unknown;
	/**
	 * What FreeCode left out of the csp, each with why ("connectDomains:
	 * https://x.example: outside the server's sandbox, …"): a view reaches no
	 * further than its server's sandbox. Absent when nothing was.
	 */
	dropped?: string[];
}

/** The _meta key under which the sidecar says what it left out of a view's csp. */
export const VIEW_REACH_KEY = 'freecode/viewReach';

/** isAppMime compares a mime type with the view's, as MIME compares: case and spaces around ";" aside. */
export function isAppMime(mime: string | undefined): boolean {
	return mime !== undefined && mime.toLowerCase().replace(/\s*;\s*/g, ';').trim() === APP_MIME;
}

/** viewOf takes the view out of a resources/read of uri, or says why there is none to render. */
export function viewOf(res: ReadResourceResult | undefined, uri: string): View | { error: string } {
	const contents: ResourceContents[] = res?.contents ?? [];
	const c = contents.find((x) => x.uri === uri) ?? contents[0];
	if (!c) return { error: `${uri} has no contents` };
	if (!isAppMime(c.mimeType)) return { error: `${uri} is ${c.mimeType ?? 'of no mime type'}, not ${APP_MIME}: not a view to render` };
	let html: string;
	if (typeof c.text === 'string') html = c.text;
	else if (typeof c.blob === 'string') html = Buffer.from(c.blob, 'base64').toString('utf8');
	else return { error: `${uri} has neither text nor blob` };
	const meta = c._meta as ({ ui?: { csp?: unknown } } & Record<string, unknown>) | undefined;
	const reach = meta?.[VIEW_REACH_KEY] as { dropped?: unknown } | undefined;
	const dropped = Array.isArray(reach?.dropped) ? reach.dropped.filter((d): d is string => typeof d === 'string') : [];
	return dropped.length > 0 ? { html, csp: meta?.ui?.csp, dropped } : { html, csp: meta?.ui?.csp };
}

function escapeAttr(s: string): string {
	return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// The page's own script: the one holder of acquireVsCodeApi. What comes from
// the frame goes to the extension; what comes from anywhere else is the
// extension's, and only toApp (passed into the frame) and size are taken.
// A message that is not plain JSON, or is too large, is dropped. The
// editor's theme goes to the extension before the view can ask for it.
const pageScript = `(function () {
	const host = acquireVsCodeApi();
	${themeScript('host')}
	const frame = document.getElementById('view');
	const maxChars = 8 * 1024 * 1024;
	window.addEventListener('message', (e) => {
		if (e.source === frame.contentWindow) {
			let text;
			try { text = JSON.stringify(e.data); } catch { return; }
			if (typeof text !== 'string' || text.length > maxChars) return;
			host.postMessage({ app: JSON.parse(text) });
			return;
		}
		const d = e.data;
		if (!d || typeof d !== 'object') return;
		if ('toApp' in d && frame.contentWindow) frame.contentWindow.postMessage(d.toApp, '*');
		if (d.size && typeof d.size === 'object') {
			if (typeof d.size.height === 'number') frame.style.height = d.size.height + 'px';
			if (typeof d.size.width === 'number') frame.style.minWidth = Math.min(d.size.width, 4000) + 'px';
		}
	});
})();`;

export interface PageOptions {
	/** The view's HTML, its policy put in already (withPolicy). */
	html: string;
	/** The view's policy: the page's own as well. */
	policy: string;
	/** One line above the frame: whose view it is and what it may load. */
	caption: string;
}

/** appPage is the webview's page for one view. */
export function appPage(o: PageOptions): string {
	return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(o.policy)}">
<style>
body{margin:0;padding:0 12px;font-family:var(--vscode-font-family);color:var(--vscode-foreground)}
.caption{font-size:0.85em;opacity:0.75;margin:6px 0}
iframe{display:block;width:100%;height:320px;border:1px solid var(--vscode-panel-border,#8884);background:#fff}
</style>
</head><body>
<div class="caption">${escapeAttr(o.caption)}</div>
<iframe id="view" title="MCP App view" sandbox="allow-scripts" allow="" referrerpolicy="no-referrer" srcdoc="${escapeAttr(o.html)}"></iframe>
<script>${pageScript}</script>
</body></html>`;
}
