// The images of a tool's result, as a page to show them: the result
// document names each one ([image: image/png (N bytes)]), and this shows
// them. Only raster types a browser draws without running anything, as
// data: URLs under a policy that loads nothing else. Pure: no `vscode`
// import.

import type { ContentBlock, ToolResult } from '../../../frontend/src/protocol.gen';

const drawable = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp']);

export interface ResultImage {
	mimeType: string;
	/** base64, as the server sent it. */
	data: string;
}

/** resultImages is the drawable images of a result, in order. */
export function resultImages(r: ToolResult): ResultImage[] {
	return r.content
		.filter((c: ContentBlock) => c.type === 'image' && typeof c.data === 'string' && typeof c.mimeType === 'string')
		.map((c) => ({ mimeType: (c.mimeType as string).toLowerCase(), data: c.data as string }))
		.filter((i) => drawable.has(i.mimeType) && /^[A-Za-z0-9+/]*={0,2}$/.test(i.data));
}

function escapeHtml(s: string): string {
	return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** imagesPage is the page for a webview: the tool's name and its images, nothing that runs. */
export function imagesPage(tool: string, images: readonly ResultImage[]): string {
	const imgs = images
		.map((i, n) => `<figure><img alt="image ${n + 1} (${escapeHtml(i.mimeType)})" src="data:${i.mimeType};base64,${i.data}"><figcaption>image ${n + 1}, ${escapeHtml(i.mimeType)}</figcaption></figure>`)
		.join('\n');
	return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">
<style>body{font-family:var(--vscode-font-family);color:var(--vscode-foreground)} img{max-width:100%;image-rendering:auto} figure{margin:1em 0}</style>
</head><body><h3>${escapeHtml(tool)}</h3>
${imgs}
</body></html>`;
}
