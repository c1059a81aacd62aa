// How Run Tool… shows a ToolResult: a document with the content, and a
// one-line summary for the notification; and how Show Task Result shows a
// task's. Pure.

import type { ContentBlock, TaskInfo, ToolResult } from './protocol.gen';
import { oneLine, printable } from './text';

const decisionWords: Record<ToolResult['decision'], string> = {
	allowed: 'allowed by the rules',
	asked: 'allowed by you',
	denied: 'denied',
	invalid: 'not run: invalid arguments',
};

function base64Bytes(b64: string): number {
	const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
	return Math.floor((b64.length * 3) / 4) - pad;
}

function contentText(c: ContentBlock): string {
	if (c.type === 'text' && typeof c.text === 'string') return printable(c.text);
	const mime = typeof c.mimeType === 'string' ? c.mimeType : 'unknown type';
	if (c.type === 'image' || c.type === 'audio') {
		const size = typeof c.data === 'string' ? ` (${base64Bytes(c.data)} bytes)` : '';
		return `[${c.type}: ${printable(mime)}${size}]`;
	}
	if (c.type === 'resource_link') return `[resource link: ${printable(String(c.uri ?? ''))}]`;
	if (c.type === 'resource') {
		const r = (c.resource ?? {}) as Record<string, unknown>;
		if (typeof r.text === 'string') return `[resource ${printable(String(r.uri ?? ''))}]\n${printable(r.text)}`;
		return `[resource ${printable(String(r.uri ?? ''))}: ${printable(String(r.mimeType ?? 'binary'))}]`;
	}
	return `[${printable(c.type)} content]`;
}

/**
 * resultDocument is the full text shown for one call's result. A call that
 * did not run says so, not "error": "— denied", "— not run: invalid
 * arguments".
 */
export function resultDocument(tool: string, r: ToolResult): string {
	const ran = r.decision === 'allowed' || r.decision === 'asked';
	const status = !ran ? decisionWords[r.decision] : `${r.outcomeUnknown ? 'outcome unknown, not retried' : r.isError ? 'error' : 'ok'}, ${decisionWords[r.decision]}`;
	return documentOf(`${printable(tool)} — ${status}, ${r.durationMs} ms`, r);
}

/**
 * taskResultDocument is the full text shown for a completed task's result, or undefined for a task that has none
 * to show: one that has not completed, or another frontend's (the sidecar tells a result to the task's own only).
 */
export function taskResultDocument(t: TaskInfo): string | undefined {
	if (!t.mine || t.status !== 'completed' || !t.result) return undefined;
	return documentOf(`${printable(t.tool)} on ${printable(t.server)}, task ${printable(t.taskId)} — ${t.result.isError ? 'error' : 'ok'}`, t.result);
}

/**
 * taskEndDocument is how a task of ours ended, as the document of the call
 * that started it shows it once it ends: its result, why it failed, or that
 * it was cancelled.
 */
export function taskEndDocument(t: TaskInfo): string {
	const done = taskResultDocument(t);
	if (done !== undefined) return done;
	const head = `${printable(t.tool)} on ${printable(t.server)}, task ${printable(t.taskId)} — ${t.status}`;
	const why = t.status === 'failed' ? (t.error ?? t.statusMessage ?? 'no reason given') : t.status === 'cancelled' ? 'The task was cancelled on its server.' : (t.statusMessage ?? '');
	return [head, '='.repeat(Math.min(head.length, 80)), '', printable(why)].join('\n').trimEnd() + '\n';
}

/** documentOf is a result's text under its head line. */
function documentOf(head: string, r: Pick<ToolResult, 'content' | 'structuredContent' | 'truncated'>): string {
	return [head, '='.repeat(Math.min(head.length, 80)), '', resultBody(r)].join('\n');
}

/** resultBody is a result's text alone, for a place whose title says whose it is (the page's run entry). */
export function resultBody(r: Pick<ToolResult, 'content' | 'structuredContent' | 'truncated'>): string {
	const out: string[] = [];
	for (const c of r.content) out.push(contentText(c), '');
	if (r.structuredContent !== undefined) {
		out.push('structuredContent:', printable(JSON.stringify(r.structuredContent, null, 2)), '');
	}
	if (r.truncated) {
		const { shownChars, totalChars, savedTo } = r.truncated;
		// Without savedTo the whole result could not be saved: the cut is all there is.
		out.push(`(cut: ${shownChars} of ${totalChars} characters shown${savedTo ? `; the whole result is in ${printable(savedTo)}` : ''})`);
	}
	return out.join('\n').trimEnd() + '\n';
}

/** resultSummary is one line for a notification. */
export function resultSummary(tool: string, r: ToolResult): string {
	const first = r.content.find((c) => c.type === 'text' && typeof c.text === 'string')?.text as string | undefined;
	const text = first ? oneLine(first, 160) : '';
	// The sidecar's own texts name the tool already ("… was denied by the user").
	if (text.startsWith(`${tool} `)) return text;
	const what = text ? `: ${text}` : '';
	// Sent, its answer lost, not sent again: it may have run, which a plain
	// "failed" would hide.
	if (r.outcomeUnknown) return `${tool} may or may not have run: outcome unknown, not retried`;
	if (r.decision === 'denied') return `${tool} was denied${what}`;
	if (r.decision === 'invalid') return `${tool} was not run${what}`;
	if (r.isError) return `${tool} failed${what}`;
	return `${tool} ran in ${r.durationMs} ms`;
}
