// The host's side of an MCP Apps view's JSON-RPC (SEP-1865): what the view
// may ask and what it is told. It checks each message the view posts,
// answers ui/initialize with the host's context, passes the view's
// tools/call and resources/read to the host (which runs them through the
// sidecar on the view's own server: the view never chooses it), and holds
// the host's notifications (the call's input and result) until the view
// says it is initialized, as the extension asks. Pure: no `vscode` import;
// the panel (appPanel.ts) moves the messages.

import type { ContentBlock, ReadResourceResult, ToolResult } from '../../../frontend/src/protocol.gen';

/** The revision of the extension this host speaks. */
export const APPS_PROTOCOL_VERSION = '2026-01-26';

/** How many of a view's calls may run at once; more are refused, so that a view cannot queue prompts without end. */
export const MAX_CALLS_IN_FLIGHT = 4;

export type RequestId = string | number;

export interface JsonRpcError {
	code: number;
	message: string;
}

/** A message on the wire between view and host. */
export type Message =
	| { jsonrpc: '2.0'; id: RequestId; method: string; params?: Record<string, unknown> }
	| { jsonrpc: '2.0'; method: string; params?: Record<string, unknown> }
	| { jsonrpc: '2.0'; id: RequestId; result: unknown }
	| { jsonrpc: '2.0'; id: RequestId | null; error: JsonRpcError };

/** One message the view posted, as checked. */
export type Incoming =
	| { kind: 'request'; id: RequestId; method: string; params: Record<string, unknown> }
	| { kind: 'notification'; method: string; params: Record<string, unknown> }
	| { kind: 'response'; id: RequestId; result?: unknown; error?: JsonRpcError }
	| { kind: 'invalid'; id: RequestId | null; message: string };

export const errors = {
	invalidRequest: -32600,
	methodNotFound: -32601,
	invalidParams: -32602,
	internal: -32603,
	/** Refused by the host: before ui/initialize, or too many calls at once. */
	refused: -32000,
} as const;

function isId(v: unknown): v is RequestId {
	return (typeof v === 'string' && v.length <= 200) || (typeof v === 'number' && Number.isFinite(v));
}

function isObject(v: unknown): v is Record<string, unknown> {
	return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** classify checks one posted message against JSON-RPC 2.0. */
export function classify(raw: unknown): Incoming {
	if (!isObject(raw)) return { kind: 'invalid', id: null, message: 'a message is a JSON-RPC object' };
	const id = isId(raw.id) ? raw.id : null;
	if (raw.jsonrpc !== '2.0') return { kind: 'invalid', id, message: 'jsonrpc must be "2.0"' };
	if ('method' in raw) {
		if (typeof raw.method !== 'string' || raw.method === '') return { kind: 'invalid', id, message: 'method must be a string' };
		if (raw.params !== undefined && !isObject(raw.params)) return { kind: 'invalid', id, message: 'params must be an object' };
		const params = (raw.params as Record<string, unknown> | undefined) ?? {};
		if (!('id' in raw)) return { kind: 'notification', method: raw.method, params };
		if (id === null) return { kind: 'invalid', id: null, message: 'id must be a string or a number' };
		return { kind: 'request', id, method: raw.method, params };
	}
	if (id === null) return { kind: 'invalid', id: null, message: 'a response needs the id of a request' };
	if ('error' in raw) {
		const e = raw.error;
		if (!isObject(e) || typeof e.code !== 'number' || typeof e.message !== 'string') return { kind: 'invalid', id, message: 'error must be { code, message }' };
		return { kind: 'response', id, error: { code: e.code, message: e.message } };
	}
	if ('result' in raw) return { kind: 'response', id, result: raw.result };
	return { kind: 'invalid', id, message: 'neither a request, a notification nor a response' };
}

/** A tools/call result as MCP has it. */
export interface CallToolResult {
	content: ContentBlock[];
	structuredContent?: unknown;
	isError?: boolean;
}

/** callToolResult is a sidecar ToolResult as the view gets it: a denial or an invalid call is a tool error saying so. */
export function callToolResult(r: ToolResult): CallToolResult {
	const out: CallToolResult = { content: r.content, isError: r.isError };
	if (r.structuredContent !== undefined) out.structuredContent = r.structuredContent;
	return out;
}

/** What the host does for the view. */
export interface AppHost {
	/** callTool runs the view's server's tool, by the server's name for it, through the permission rules. */
	callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
	/** readResource reads a resource of the view's server. */
	readResource(uri: string): Promise<ReadResourceResult>;
	/** resize sizes the view's frame to what the view says it needs. */
	resize(size: { width?: number; height?: number }): void;
	/** log records what the view logs (notifications/message). */
	log(level: string, text: string): void;
	/**
	 * openLink opens an http(s) URL the view asks for outside the editor,
	 * where the editor asks the user first as it does for any link; it
	 * reports whether it was opened.
	 */
	openLink(url: string): Promise<boolean>;
}

/** What the view is told in the answer to ui/initialize. */
export interface AppInit {
	hostInfo: { name: string; version: string };
	hostCapabilities: Record<string, unknown>;
	hostContext: Record<string, unknown>;
	/** The call's arguments: ui/notifications/tool-input once the view is initialized. */
	toolInput: Record<string, unknown>;
}

type State = 'new' | 'initializing' | 'initialized' | 'closed';

/** The largest size a view may ask for, in CSS pixels. */
const maxSize = 20000;

function size(v: unknown): number | undefined {
	return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.min(Math.ceil(v), maxSize) : undefined;
}

/**
 * AppBridge is one view's session with the host. receive takes what the
 * view posts; post sends the host's messages to it.
 */
export class AppBridge {
	private state: State = 'new';
	private queue: Message[] = [];
	private inFlight = 0;
	private nextId = 1;
	private readonly pending = new Map<RequestId, (m: { result?: unknown; error?: JsonRpcError }) => void>();

	constructor(
		private readonly host: AppHost,
		private readonly post: (m: Message) => void,
		private readonly init: AppInit,
	) {}

	/** initialized reports whether the view finished its handshake. */
	get initialized(): boolean {
		return this.state === 'initialized';
	}

	/**
	 * setContext changes part of the host's context (the theme, its style
	 * variables): a view not yet answered gets it in ui/initialize, one
	 * answered is told in ui/notifications/host-context-changed.
	 */
	setContext(part: Record<string, unknown>): void {
		Object.assign(this.init.hostContext, part);
		if (this.state !== 'new') this.notify('ui/notifications/host-context-changed', { ...part });
	}

	/** toolResult tells the view the call's result (held until it is initialized). */
	toolResult(r: CallToolResult): void {
		this.notify('ui/notifications/tool-result', { ...r });
	}

	/**
	 * teardown asks the view to wrap up (ui/resource-teardown) and settles
	 * when it answers; a view that never initialized is not asked.
	 */
	teardown(reason: string): Promise<void> {
		if (this.state !== 'initialized') {
			this.state = 'closed';
			return Promise.resolve();
		}
		const id = `host-${this.nextId++}`;
		const done = new Promise<void>((resolve) => this.pending.set(id, () => resolve()));
		this.post({ jsonrpc: '2.0', id, method: 'ui/resource-teardown', params: { reason } });
		return done.finally(() => (this.state = 'closed'));
	}

	/** close drops the session: nothing more is sent to or taken from the view. */
	close(): void {
		this.state = 'closed';
		for (const settle of this.pending.values()) settle({ error: { code: errors.refused, message: 'the view is closed' } });
		this.pending.clear();
		this.queue = [];
	}

	private notify(method: string, params: Record<string, unknown>): void {
		const m: Message = { jsonrpc: '2.0', method, params };
		if (this.state === 'initialized') this.post(m);
		else if (this.state !== 'closed') this.queue.push(m);
	}

	private answer(id: RequestId, result: unknown): void {
		if (this.state !== 'closed') this.post({ jsonrpc: '2.0', id, result });
	}

	private fail(id: RequestId | null, code: number, message: string): void {
		if (this.state !== 'closed') this.post({ jsonrpc: '2.0', id, error: { code, message } });
	}

	/** receive handles one message the view posted. */
	async receive(raw: unknown): Promise<void> {
		if (this.state === 'closed') return;
		const m = classify(raw);
		switch (m.kind) {
			case 'invalid':
				// A broken notification gets no answer; a broken request is told why.
				if (m.id !== null) this.fail(m.id, errors.invalidRequest, m.message);
				return;
			case 'response': {
				const settle = this.pending.get(m.id);
				this.pending.delete(m.id);
				settle?.(m);
				return;
			}
			case 'notification':
				this.onNotification(m.method, m.params);
				return;
			case 'request':
				await this.onRequest(m.id, m.method, m.params);
		}
	}

	private onNotification(method: string, params: Record<string, unknown>): void {
		switch (method) {
			case 'ui/notifications/initialized': {
				if (this.state !== 'initializing') return;
				this.state = 'initialized';
				this.post({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: this.init.toolInput } });
				const held = this.queue;
				this.queue = [];
				held.forEach((q) => this.post(q));
				return;
			}
			case 'ui/notifications/size-changed': {
				const width = size(params.width);
				const height = size(params.height);
				if (width !== undefined || height !== undefined) this.host.resize({ width, height });
				return;
			}
			case 'notifications/message': {
				const level = typeof params.level === 'string' ? params.level : 'info';
				const data = typeof params.data === 'string' ? params.data : JSON.stringify(params.data ?? null);
				this.host.log(level, data.length > 2000 ? `${data.slice(0, 2000)}… (${data.length} characters)` : data);
				return;
			}
		}
		// Any other notification is one this host has no use for.
	}

	private async onRequest(id: RequestId, method: string, params: Record<string, unknown>): Promise<void> {
		if (method === 'ping') return this.answer(id, {});
		if (method === 'ui/initialize') {
			if (this.state !== 'new') return this.fail(id, errors.invalidRequest, 'ui/initialize was sent already');
			this.state = 'initializing';
			return this.answer(id, {
				protocolVersion: APPS_PROTOCOL_VERSION,
				hostInfo: this.init.hostInfo,
				hostCapabilities: this.init.hostCapabilities,
				hostContext: this.init.hostContext,
			});
		}
		if (this.state === 'new') return this.fail(id, errors.refused, `${method} before ui/initialize`);
		switch (method) {
			case 'tools/call':
				return this.callTool(id, params);
			case 'resources/read': {
				if (typeof params.uri !== 'string' || params.uri === '') return this.fail(id, errors.invalidParams, 'resources/read needs uri, a string');
				try {
					return this.answer(id, await this.host.readResource(params.uri));
				} catch (e) {
					return this.fail(id, errors.internal, message(e));
				}
			}
			case 'ui/open-link':
				return this.openLink(id, params);
			case 'ui/request-display-mode':
				// The panel is the one mode there is.
				return this.answer(id, { mode: 'inline' });
		}
		return this.fail(id, errors.methodNotFound, `${method} is not offered by this host`);
	}

	private async openLink(id: RequestId, params: Record<string, unknown>): Promise<void> {
		if (typeof params.url !== 'string' || params.url.length > 8192) return this.fail(id, errors.invalidParams, 'ui/open-link needs url, a string');
		let url: URL;
		try {
			url = new URL(params.url);
		} catch {
			return this.fail(id, errors.invalidParams, `ui/open-link: ${JSON.stringify(params.url.slice(0, 200))} is not a URL`);
		}
		if (!linkSchemes.has(url.protocol)) return this.fail(id, errors.invalidParams, `ui/open-link opens http and https links, not ${url.protocol}`);
		try {
			return this.answer(id, (await this.host.openLink(url.href)) ? {} : { isError: true });
		} catch (e) {
			return this.fail(id, errors.internal, message(e));
		}
	}

	private async callTool(id: RequestId, params: Record<string, unknown>): Promise<void> {
		if (typeof params.name !== 'string' || params.name === '') return this.fail(id, errors.invalidParams, 'tools/call needs name, a string');
		if (params.arguments !== undefined && !isObject(params.arguments)) return this.fail(id, errors.invalidParams, 'tools/call arguments must be an object');
		if (this.inFlight >= MAX_CALLS_IN_FLIGHT) return this.fail(id, errors.refused, `${MAX_CALLS_IN_FLIGHT} calls of this view are running already; try again when one ends`);
		this.inFlight++;
		try {
			this.answer(id, await this.host.callTool(params.name, (params.arguments as Record<string, unknown> | undefined) ?? {}));
		} catch (e) {
			this.fail(id, errors.internal, message(e));
		} finally {
			this.inFlight--;
		}
	}
}

/** The schemes a view may ask the host to open: web pages, nothing that runs or reads on this machine. */
const linkSchemes = new Set(['http:', 'https:']);

function message(e: unknown): string {
	return e instanceof Error ? e.message : String(e);
}
