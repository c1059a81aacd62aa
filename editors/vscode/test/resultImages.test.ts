import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ToolResult } from '../../../frontend/src/protocol.gen';
import { imagesPage, resultImages } from '../src/resultImages';

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function result(content: ToolResult['content']): ToolResult {
	return { callId: 'c', isError: false, decision: 'allowed', durationMs: 1, content };
}

test('result images: raster images are shown as images; nothing else, nothing that runs', () => {
	const r = result([
		{ type: 'text', text: 'hi' },
		{ type: 'image', mimeType: 'image/png', data: png },
		{ type: 'image', mimeType: 'image/svg+xml', data: 'PHN2Zz4=' },
		{ type: 'image', mimeType: 'image/png', data: 'not base64!' },
		{ type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
	]);
	assert.deepEqual(resultImages(r), [{ mimeType: 'image/png', data: png }]);
	const page = imagesPage('mcp__x__<shot>', resultImages(r));
	assert.ok(page.includes(`src="data:image/png;base64,${png}"`));
	assert.ok(page.includes("default-src 'none'; img-src data:"));
	assert.ok(page.includes('mcp__x__&#60;shot&#62;'));
	assert.ok(!page.includes('<script'));
});
