// An MCP server's sampling request (freecode/sampling/request) as the user
// judges it: its params read, the consent dialog's words (everything the
// model would be sent: the system prompt, the messages, the model
// preferences, the token budget), the choice of a VS Code language model
// from the server's hints, and the messages as the model gets them.
// samplingPrompt.ts puts it on screen and runs the model.
//
// The extension owns no model of its own: it asks VS Code's Language Model
// API (vscode.lm), whose models other extensions provide. That API has no
// system role, so a system prompt goes first as a user message that says so,
// and it takes text only, so a request with images or audio is refused.
//
// Pure: no `vscode` import.

import type { SamplingRequest } from '../../../frontend/src/protocol.gen';
import { oneLine, printable, truncate } from '../../../frontend/src/text';

/** ContentBlock is an MCP content block: text, image, audio, … */
export interface ContentBlock {
	type: string;
	text?: string;
	mimeType?: string;
	[k: string]: unknown;
}

export interface SamplingMessage {
	role: 'user' | 'assistant';
	/** One block, or (MCP 2025-11-25) a list of them. */
	content: ContentBlock | ContentBlock[];
}

const blocks = (m: SamplingMessage): ContentBlock[] => (Array.isArray(m.content) ? m.content : [m.content]);

export interface ModelPreferences {
	hints?: { name?: string }[];
	costPriority?: number;
	speedPriority?: number;
	intelligencePriority?: number;
}

/** SamplingParams are MCP's sampling/createMessage params, the parts the extension reads. */
export interface SamplingParams {
	messages: SamplingMessage[];
	systemPrompt?: string;
	modelPreferences?: ModelPreferences;
	maxTokens: number;
	temperature?: number;
	stopSequences?: string[];
	includeContext?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** readParams checks a sampling request's params enough to show them and run them. */
export function readParams(params: unknown): { params: SamplingParams } | { error: string } {
	if (!isObj(params)) return { error: 'the params are not an object' };
	if (!Array.isArray(params.messages) || params.messages.length === 0) return { error: 'the request has no messages' };
	for (const [i, m] of params.messages.entries()) {
		if (!isObj(m) || (m.role !== 'user' && m.role !== 'assistant')) return { error: `message ${i} has no user or assistant role` };
		const content = Array.isArray(m.content) ? m.content : [m.content];
		if (content.length === 0 || !content.every((c) => isObj(c) && typeof c.type === 'string')) {
			return { error: `message ${i} has no content block` };
		}
	}
	if (typeof params.maxTokens !== 'number') return { error: 'the request has no maxTokens' };
	return { params: params as unknown as SamplingParams };
}

/** ModelInfo is what the extension reads of a vscode.lm model. */
export interface ModelInfo {
	id: string;
	name: string;
	vendor: string;
	family: string;
}

/**
 * pickModel chooses among the available models: the first hint (in the
 * server's order of preference) that a model's family, id or name contains,
 * else the first model. Hints are advice, as MCP has them.
 */
export function pickModel<M extends ModelInfo>(models: readonly M[], prefs?: ModelPreferences): M | undefined {
	for (const h of prefs?.hints ?? []) {
		const want = h.name?.toLowerCase();
		if (!want) continue;
		const m = models.find((m) => [m.family, m.id, m.name].some((s) => s.toLowerCase().includes(want)));
		if (m) return m;
	}
	return models[0];
}

/** ChatMessage is one message as the language model gets it. */
export interface ChatMessage {
	role: 'user' | 'assistant';
	text: string;
}

/** chatMessages turns the request into the model's messages, or says why it cannot. */
export function chatMessages(p: SamplingParams): { messages: ChatMessage[] } | { error: string } {
	const out: ChatMessage[] = [];
	if (p.systemPrompt) out.push({ role: 'user', text: `System instructions for this conversation:\n${p.systemPrompt}` });
	for (const m of p.messages) {
		const texts: string[] = [];
		for (const c of blocks(m)) {
			if (c.type !== 'text' || typeof c.text !== 'string') {
				return { error: `the request holds ${c.type} content, and VS Code's language models take text only` };
			}
			texts.push(c.text);
		}
		out.push({ role: m.role, text: texts.join('\n') });
	}
	return { messages: out };
}

/** Consent is the dialog's words, and the whole request for Show Full Request. */
export interface Consent {
	message: string;
	detail: string;
	full: string;
}

function contentText(m: SamplingMessage, max: number): string {
	const parts = blocks(m).map((c) =>
		c.type === 'text' && typeof c.text === 'string'
			? printable(c.text)
			: `[${printable(c.type)}${typeof c.mimeType === 'string' ? ` ${printable(c.mimeType)}` : ''}]`,
	);
	return truncate(parts.join('\n'), max);
}

function preferences(prefs: ModelPreferences | undefined): string | undefined {
	if (!prefs) return undefined;
	const parts: string[] = [];
	const hints = (prefs.hints ?? []).map((h) => h.name).filter((n): n is string => !!n);
	if (hints.length > 0) parts.push(`hints ${hints.map((h) => printable(h)).join(', ')}`);
	for (const k of ['intelligence', 'speed', 'cost'] as const) {
		const v = prefs[`${k}Priority`];
		if (typeof v === 'number') parts.push(`${k} ${v}`);
	}
	return parts.length > 0 ? parts.join('; ') : undefined;
}

/**
 * consent words the dialog for a sampling request, to be answered by
 * model: the server, the model, every message (each cut at messageChars,
 * the whole in full), the system prompt and the limits the server asks for.
 */
export function consent(req: SamplingRequest, p: SamplingParams, model: ModelInfo, messageChars: number): Consent {
	const modelName = `${printable(model.name)} (${printable(model.vendor)})`;
	const count = p.messages.length === 1 ? 'a message' : `${p.messages.length} messages`;
	const message = `The MCP server ${printable(req.server)} asks to send ${count} to ${modelName}.`;
	const head: string[] = [];
	if (req.callId) head.push(`During call ${printable(req.callId)}.`);

	const limits = [`at most ${p.maxTokens} tokens`];
	if (typeof p.temperature === 'number') limits.push(`temperature ${p.temperature}`);
	if (p.stopSequences && p.stopSequences.length > 0) limits.push(`stop at ${p.stopSequences.map((s) => JSON.stringify(s)).join(', ')}`);
	const tail = [`Asks for: ${printable(limits.join(', '))}.`];
	const prefs = preferences(p.modelPreferences);
	if (prefs) tail.push(`Model preferences: ${prefs}.`);
	if (p.includeContext && p.includeContext !== 'none') {
		tail.push(`It asks for context (${printable(p.includeContext)}); none is added: the model gets these messages only.`);
	}

	const detail = [...head];
	const full = [`# Sampling request of ${printable(req.server)} for ${modelName}`, '', ...head, ''];
	if (p.systemPrompt) {
		detail.push(`System prompt: ${oneLine(p.systemPrompt, messageChars)}`);
		full.push('## System prompt', '', printable(p.systemPrompt), '');
	}
	detail.push('Messages:');
	full.push('## Messages', '');
	for (const m of p.messages) {
		detail.push(`  ${m.role}: ${oneLine(contentText(m, messageChars), messageChars)}`);
		full.push(`### ${m.role}`, '', contentText(m, Number.MAX_SAFE_INTEGER), '');
	}
	detail.push(...tail, '', 'Nothing is sent to the model unless you allow it.');
	full.push('## Limits', '', ...tail, '');
	return { message, detail: detail.join('\n'), full: full.join('\n') };
}

/** The answers of the sampling consent. */
export type SamplingChoice = 'deny' | 'showFull' | 'allow';

/**
 * samplingButtons are the consent's buttons, in order. VS Code's modal makes
 * the first button that is not a close affordance its default (Enter), so
 * Deny comes first and none is a close affordance: Enter sends nothing to a
 * model, and Escape is VS Code's own Cancel, which denies too.
 */
export const samplingButtons: readonly { title: string; choice: SamplingChoice }[] = [
	{ title: 'Deny', choice: 'deny' },
	{ title: 'Show Full Request', choice: 'showFull' },
	{ title: 'Allow', choice: 'allow' },
];
