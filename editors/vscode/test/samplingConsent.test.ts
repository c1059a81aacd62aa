import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SamplingRequest } from '../../../frontend/src/protocol.gen';
import { chatMessages, consent, pickModel, readParams, samplingButtons, type ModelInfo, type SamplingParams } from '../src/samplingConsent';

const params = {
	messages: [
		{ role: 'user', content: { type: 'text', text: 'Summarize issue #12 in one line.' } },
		{ role: 'assistant', content: { type: 'text', text: 'Which repository?' } },
		{ role: 'user', content: [{ type: 'text', text: 'freecode/freecode' }, { type: 'text', text: 'thanks' }] },
	],
	systemPrompt: 'You are a terse assistant.',
	modelPreferences: { hints: [{ name: 'sonnet' }, { name: 'gpt' }], speedPriority: 0.8, costPriority: 0.2 },
	maxTokens: 100,
	temperature: 0.7,
	stopSequences: ['\n\n'],
	includeContext: 'thisServer',
};
const req: SamplingRequest = { server: 'gh', callId: 'c9', params };

function read(p: unknown): SamplingParams {
	const r = readParams(p);
	assert.ok('params' in r, JSON.stringify(r));
	return r.params;
}

const models: ModelInfo[] = [
	{ id: 'copilot-gpt-4o', name: 'GPT-4o', vendor: 'copilot', family: 'gpt-4o' },
	{ id: 'copilot-claude-sonnet', name: 'Claude Sonnet', vendor: 'copilot', family: 'claude-sonnet' },
];

test('sampling: params that cannot be shown or run are refused', () => {
	assert.deepEqual(readParams('x'), { error: 'the params are not an object' });
	assert.deepEqual(readParams({ messages: [], maxTokens: 1 }), { error: 'the request has no messages' });
	assert.deepEqual(readParams({ messages: [{ role: 'system', content: { type: 'text', text: 'x' } }], maxTokens: 1 }), {
		error: 'message 0 has no user or assistant role',
	});
	assert.deepEqual(readParams({ messages: [{ role: 'user', content: [] }], maxTokens: 1 }), { error: 'message 0 has no content block' });
	assert.deepEqual(readParams({ messages: [{ role: 'user', content: { type: 'text', text: 'x' } }] }), { error: 'the request has no maxTokens' });
	read(params);
});

test('sampling: the model is the first hint some model matches, else the first model', () => {
	assert.equal(pickModel(models, read(params).modelPreferences)?.id, 'copilot-claude-sonnet');
	assert.equal(pickModel(models, { hints: [{ name: 'llama' }, { name: 'GPT' }] })?.id, 'copilot-gpt-4o');
	assert.equal(pickModel(models, { hints: [{ name: 'llama' }] })?.id, 'copilot-gpt-4o');
	assert.equal(pickModel(models)?.id, 'copilot-gpt-4o');
	assert.equal(pickModel([], read(params).modelPreferences), undefined);
});

test('sampling: the model gets the system prompt first, as a user message that says so, then the messages', () => {
	assert.deepEqual(chatMessages(read(params)), {
		messages: [
			{ role: 'user', text: 'System instructions for this conversation:\nYou are a terse assistant.' },
			{ role: 'user', text: 'Summarize issue #12 in one line.' },
			{ role: 'assistant', text: 'Which repository?' },
			{ role: 'user', text: 'freecode/freecode\nthanks' },
		],
	});
	const image = { messages: [{ role: 'user', content: { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } }], maxTokens: 5 };
	assert.deepEqual(chatMessages(read(image)), { error: "the request holds image content, and VS Code's language models take text only" });
});

test('sampling: the consent shows everything that would be sent, and the limits asked for', () => {
	const c = consent(req, read(params), models[1], 300);
	assert.equal(c.message, 'The MCP server gh asks to send 3 messages to Claude Sonnet (copilot).');
	assert.equal(
		c.detail,
		[
			'During call c9.',
			'System prompt: You are a terse assistant.',
			'Messages:',
			'  user: Summarize issue #12 in one line.',
			'  assistant: Which repository?',
			'  user: freecode/freecode thanks',
			'Asks for: at most 100 tokens, temperature 0.7, stop at "\\n\\n".',
			'Model preferences: hints sonnet, gpt; speed 0.8; cost 0.2.',
			'It asks for context (thisServer); none is added: the model gets these messages only.',
			'',
			'Nothing is sent to the model unless you allow it.',
		].join('\n'),
	);
	assert.match(c.full, /^# Sampling request of gh for Claude Sonnet \(copilot\)\n/);
	assert.match(c.full, /## System prompt\n\nYou are a terse assistant\.\n/);
	assert.match(c.full, /### user\n\nfreecode\/freecode\nthanks\n/);
});

test('sampling: a long message is cut in the dialog and whole in the full request; server text is made printable', () => {
	const long = 'x'.repeat(1000);
	const p = read({ messages: [{ role: 'user', content: { type: 'text', text: `${long}\u202e` } }], maxTokens: 10 });
	const c = consent({ server: 'e\u0007vil', params: p }, p, models[0], 50);
	assert.equal(c.message, 'The MCP server e\\x07vil asks to send a message to GPT-4o (copilot).');
	const line = c.detail.split('\n').find((l) => l.startsWith('  user: '));
	assert.equal(line, `  user: ${'x'.repeat(49)}…`);
	assert.ok(c.full.includes(`${long}\\u202e`));
	assert.ok(!c.detail.includes('During call'));
});

test('sampling: Enter and Escape send nothing to a model', () => {
	// VS Code's modal: Enter is the first button that is not a close
	// affordance; Escape is the close affordance, else VS Code's Cancel.
	assert.equal(samplingButtons[0].choice, 'deny');
	assert.ok(samplingButtons.every((b) => !('isCloseAffordance' in b)));
	assert.equal(samplingButtons.filter((b) => b.choice === 'allow').length, 1);
});
