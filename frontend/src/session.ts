// Session binds one JSON-RPC connection to the sidecar (the LanguageClient in
// VS Code, a bare vscode-jsonrpc connection in the integration test) to the
// servers model: it answers the sidecar's requests, applies its notifications
// and wraps the requests the commands send, each typed and checked by the
// method table generated from the Go side (protocol.gen.ts). The view is
// updated from notifications only; a request goes out when a notification
// says something changed, never on a timer. Pure: no `vscode` import.

import { ResponseError } from 'vscode-jsonrpc';
import { is, validate, type Check } from './check';
import * as p from './protocol.gen';
import type { ServersModel } from './model';
import { DENIED } from './permissionChoices';

/** MCP's code for a sampling request that is refused. */
const SAMPLING_REFUSED = -1;

/** Disposable is what a registration returns. */
export interface Disposable {
	dispose(): void;
}

/** CancellationToken is the part of vscode-jsonrpc's token the handlers read. */
export interface CancellationToken {
	readonly isCancellationRequested: boolean;
	onCancellationRequested(listener: () => void): Disposable;
}

/** Connection is what Session needs of a JSON-RPC connection; LanguageClient and vscode-jsonrpc's MessageConnection both have it. */
export interface Connection {
	sendRequest<R>(method: string, params: unknown, token?: CancellationToken): Promise<R>;
	onNotification(method: string, handler: (params: any) => void): Disposable;
	onRequest(method: string, handler: (params: any, token: CancellationToken) => unknown): Disposable;
}

/** Hooks are what the session hands to the rest of the extension. */
export interface Hooks {
	/** Ask the user about a call; a rejection or a bad answer counts as deny. */
	askPermission(req: p.PermissionRequest, token: CancellationToken): Promise<p.PermissionResponse>;
	serverLog?(log: p.ServerLog): void;
	configProblems?(problems: p.ConfigProblems): void;
	toolProgress?(progress: p.ToolProgress): void;
	toolsChanged?(changed: p.ToolsChanged): void;
	/** Ask the user an MCP server's form or URL; a rejection or a bad answer counts as decline. Without it, every one is declined. */
	askElicitation?(req: p.ElicitationRequest, token: CancellationToken): Promise<p.ElicitationResponse>;
	/** Show an MCP server's sampling request and run it if the user allows; reject (a ResponseError passes as it is) to refuse. */
	askSampling?(req: p.SamplingRequest, token: CancellationToken): Promise<p.SamplingResult>;
	/** A server's tools awaiting review changed (the tool list is read again too). */
	reviewNeeded?(reviews: p.ReviewNeeded): void;
	/** What of the trusted project's rules awaits review changed; no files once nothing does. */
	rulesReview?(review: p.RulesReview): void;
	/** Something the sidecar sent did not fit the protocol, or a refresh failed. */
	warn?(message: string): void;
}

/** ServerMethod is a request that answers with the server's status. */
type ServerMethod = { [M in keyof p.FrontendRequests]: p.FrontendRequests[M]['result'] extends p.ServerStatus ? M : never }[keyof p.FrontendRequests];

/** Session is one live connection to the sidecar. */
export class Session {
	// Set once listen's registration is disposed: the connection is being
	// shut down, and what it answers from then on is no news.
	private closed = false;
	private refreshing?: Promise<void>;
	private refreshAgain = false;
	// Statuses that arrived while freecode/servers was in flight: its answer
	// may predate them, so they are applied again on top of it.
	private pendingStatuses: p.ServerStatus[] | undefined;
	// The last read of each server's resources and prompts, by "kind
	// server": an answer that is not the last read's is stale.
	private readonly listReads = new Map<string, number>();
	private reads = 0;

	constructor(
		private readonly conn: Connection,
		private readonly model: ServersModel,
		private readonly hooks: Hooks,
	) {}

	/** listen registers every handler; call it before the connection starts. */
	listen(): Disposable {
		const subs: Disposable[] = [
			this.onRequest('freecode/permission/request', (params, token) => this.onPermission(params, token)),
			this.onRequest('freecode/elicitation/request', (params, token) => this.onElicitation(params, token)),
			this.onRequest('freecode/sampling/request', (params, token) => this.onSampling(params, token)),
			this.onNotification('freecode/servers/status', (params) => {
				this.pendingStatuses?.push(params);
				this.model.updateServer(params);
			}),
			this.onNotification('freecode/tools/changed', (params) => {
				this.hooks.toolsChanged?.(params);
				// The tool set changed. The servers are read with the tools, so the
				// tree's counts and its tool nodes come from one moment.
				void this.refresh();
			}),
			this.onNotification('freecode/servers/log', (params) => this.hooks.serverLog?.(params)),
			this.onNotification('freecode/config/problems', (params) => {
				// The view and the status bar say it too, not only the Problems panel.
				this.model.setProblems(params);
				this.hooks.configProblems?.(params);
			}),
			this.onNotification('freecode/tools/progress', (params) => this.hooks.toolProgress?.(params)),
			this.onNotification('freecode/resources/changed', (params) => void this.readList('resources', params.server)),
			this.onNotification('freecode/prompts/changed', (params) => void this.readList('prompts', params.server)),
			this.onNotification('freecode/tools/reviewNeeded', (params) => {
				this.hooks.reviewNeeded?.(params);
				// The marks of the tools changed; the provider definitions' hashes
				// may not have (models keep the accepted definition), so no
				// tools/changed comes for it.
				void this.refresh();
			}),
			this.onNotification('freecode/tasks/changed', (params) => this.model.updateTask(params)),
			this.onNotification('freecode/rules/reviewNeeded', (params) => this.hooks.rulesReview?.(params)),
		];
		return {
			dispose: () => {
				this.closed = true;
				subs.forEach((s) => s.dispose());
			},
		};
	}

	/**
	 * onRequest answers one of the sidecar's requests with the method's
	 * result; the handler checks the params, since what it answers to
	 * params that do not fit differs (a denial, a decline, a refusal).
	 */
	private onRequest<M extends keyof p.SidecarRequests>(
		method: M,
		handler: (params: unknown, token: CancellationToken) => Promise<p.SidecarRequests[M]['result']>,
	): Disposable {
		return this.conn.onRequest(method, handler);
	}

	/** onNotification handles a notification of the sidecar whose params fit the method table; others are reported and ignored. */
	private onNotification<M extends keyof p.SidecarNotifications>(method: M, handler: (params: p.SidecarNotifications[M]) => void): Disposable {
		const check: Check<p.SidecarNotifications[M]> = p.sidecarNotifications[method];
		return this.conn.onNotification(method, (params: unknown) => {
			if (this.check(method, check, params)) handler(params);
		});
	}

	private check<V>(what: string, shape: Check<V>, v: unknown): v is V {
		const errs = validate(shape, v);
		if (errs.length === 0) return true;
		this.hooks.warn?.(`ignored a ${what} that does not fit the protocol: ${errs.slice(0, 3).join('; ')}`);
		return false;
	}

	/**
	 * send sends one of the method table's requests, its params typed by the
	 * table; what it answers is the caller's to check (request checks it
	 * whole, items item by item).
	 */
	private send<M extends keyof p.FrontendRequests>(method: M, params: p.FrontendRequests[M]['params'], token?: CancellationToken): Promise<unknown> {
		// vscode-jsonrpc takes a trailing argument for a token only when it
		// is one: an undefined one would make the params positional, [params,
		// null], which the sidecar rightly refuses.
		if (token) return this.conn.sendRequest(method, params, token);
		return this.conn.sendRequest(method, params);
	}

	/** request sends a request and returns its answer, which must fit the method's result: any other is an error. */
	private async request<M extends keyof p.FrontendRequests>(
		method: M,
		params: p.FrontendRequests[M]['params'],
		token?: CancellationToken,
	): Promise<p.FrontendRequests[M]['result']> {
		const answer = await this.send(method, params, token);
		const check: Check<p.FrontendRequests[M]['result']> = p.frontendRequests[method].result;
		const errs = validate(check, answer);
		if (errs.length > 0) throw new Error(`the sidecar answered ${method} with something outside the protocol: ${errs.slice(0, 3).join('; ')}`);
		return answer as p.FrontendRequests[M]['result'];
	}

	/**
	 * items is the list under key of a list's answer, each item that does
	 * not fit the protocol left out and reported: one server a newer
	 * sidecar describes in words this frontend does not know hides only
	 * that server.
	 */
	private items<V>(what: string, item: Check<V>, answer: unknown, key: string): V[] {
		const list = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>)[key] : undefined;
		if (!Array.isArray(list)) {
			this.hooks.warn?.(`ignored an answer without its list of ${key}: ${JSON.stringify(answer)?.slice(0, 80)}`);
			return [];
		}
		return list.filter((x): x is V => this.check(what, item, x));
	}

	private async onPermission(params: unknown, token: CancellationToken): Promise<p.PermissionResponse> {
		const method = 'freecode/permission/request';
		// A request we cannot read is not one the user can judge: deny it.
		if (!this.check(method, p.sidecarRequests[method].params, params)) return DENIED;
		try {
			const answer = await this.hooks.askPermission(params, token);
			if (is(p.sidecarRequests[method].result, answer)) return answer;
			this.hooks.warn?.(`the permission prompt answered ${JSON.stringify(answer)}, which is not in the protocol; answering deny`);
			return DENIED;
		} catch (e) {
			this.hooks.warn?.(`permission prompt failed, answering deny: ${(e as Error).message}`);
			return DENIED;
		}
	}

	private async onElicitation(params: unknown, token: CancellationToken): Promise<p.ElicitationResponse> {
		const method = 'freecode/elicitation/request';
		const decline: p.ElicitationResponse = { action: 'decline' };
		if (!this.check(method, p.sidecarRequests[method].params, params) || !this.hooks.askElicitation) return decline;
		try {
			const answer = await this.hooks.askElicitation(params, token);
			if (is(p.sidecarRequests[method].result, answer)) return answer;
			this.hooks.warn?.(`the form answered ${JSON.stringify(answer)}, which is not in the protocol; declining`);
		} catch (e) {
			this.hooks.warn?.(`the form failed, declining: ${(e as Error).message}`);
		}
		return decline;
	}

	private async onSampling(params: unknown, token: CancellationToken): Promise<p.SamplingResult> {
		const method = 'freecode/sampling/request';
		if (!this.check(method, p.sidecarRequests[method].params, params)) {
			throw new ResponseError(SAMPLING_REFUSED, 'sampling refused: the request does not fit the protocol');
		}
		if (!this.hooks.askSampling) throw new ResponseError(SAMPLING_REFUSED, 'sampling refused: this frontend has no model');
		let result: p.SamplingResult;
		try {
			result = await this.hooks.askSampling(params, token);
		} catch (e) {
			if (e instanceof ResponseError) throw e;
			throw new ResponseError(SAMPLING_REFUSED, `sampling refused: ${(e as Error).message}`);
		}
		if (!this.check('the sampling answer', p.sidecarRequests[method].result, result)) {
			throw new ResponseError(SAMPLING_REFUSED, 'sampling refused: the answer does not fit the protocol');
		}
		return result;
	}

	/**
	 * readList reads one server's resources or prompts into the model, after
	 * a change notification. A server that is not connected has none; the
	 * answer of a read that a later one overtook is dropped.
	 */
	private async readList(kind: 'resources' | 'prompts', server: string): Promise<void> {
		const key = `${kind} ${server}`;
		const n = ++this.reads;
		this.listReads.set(key, n);
		const set = (list: (p.ResourceInfo | p.PromptInfo)[]) => {
			if (this.closed || this.listReads.get(key) !== n) return;
			if (kind === 'resources') this.model.setResources(server, list as p.ResourceInfo[]);
			else this.model.setPrompts(server, list as p.PromptInfo[]);
		};
		if (this.model.server(server)?.state !== 'connected') {
			set([]);
			return;
		}
		try {
			set(kind === 'resources' ? await this.resources(server) : await this.prompts(server));
		} catch (e) {
			set([]);
			// A server that stopped meanwhile has none, and nothing is wrong.
			if (!this.closed && this.model.server(server)?.state === 'connected') {
				this.hooks.warn?.(`reading the ${kind} of ${server} failed: ${(e as Error).message}`);
			}
		}
	}

	/**
	 * refresh reads freecode/servers and freecode/tools into the model. Calls
	 * that arrive while one runs make one more run after it, not one each.
	 */
	refresh(): Promise<void> {
		if (this.closed) return Promise.resolve();
		if (this.refreshing) {
			this.refreshAgain = true;
			return this.refreshing;
		}
		this.refreshing = (async () => {
			try {
				do {
					this.refreshAgain = false;
					await this.readOnce();
				} while (this.refreshAgain && !this.closed);
			} finally {
				this.refreshing = undefined;
			}
		})();
		return this.refreshing;
	}

	private async readOnce(): Promise<void> {
		this.pendingStatuses = [];
		try {
			const [servers, tools] = await Promise.all([this.send('freecode/servers', {}), this.send('freecode/tools', {})]);
			if (this.closed) return;
			const statuses = this.items('ServerStatus', p.ServerStatus, servers, 'servers');
			const later = this.pendingStatuses;
			this.model.setServers(statuses);
			for (const s of later) this.model.updateServer(s);
			this.model.setTools(this.items('ToolInfo', p.ToolInfo, tools, 'tools'));
			await this.readTasks();
		} catch (e) {
			if (!this.closed) this.hooks.warn?.(`reading the servers from the sidecar failed: ${(e as Error).message}`);
		} finally {
			this.pendingStatuses = undefined;
		}
	}

	/** readTasks reads the tasks calls started (freecode/tasks): those of an earlier window or sidecar run too. */
	private async readTasks(): Promise<void> {
		try {
			const r = await this.send('freecode/tasks', {});
			if (this.closed) return;
			this.model.setTasks(this.items('TaskInfo', p.TaskInfo, r, 'tasks'));
		} catch (e) {
			if (!this.closed) this.hooks.warn?.(`reading the tasks from the sidecar failed: ${(e as Error).message}`);
		}
	}

	/** taskRequest runs one of the requests that answer with a task as it is then, and applies it. */
	private async taskRequest(method: 'freecode/tasks/cancel' | 'freecode/tasks/adopt', server: string, taskId: string): Promise<p.TaskInfo> {
		const t = await this.request(method, { server, taskId });
		this.model.updateTask(t);
		return t;
	}

	/** cancelTask cancels a running task of ours on its server (freecode/tasks/cancel); its end comes as freecode/tasks/changed. */
	cancelTask(server: string, taskId: string): Promise<p.TaskInfo> {
		return this.taskRequest('freecode/tasks/cancel', server, taskId);
	}

	/** adoptTask makes another frontend's task ours (freecode/tasks/adopt): its result, its questions and its cancel. */
	adoptTask(server: string, taskId: string): Promise<p.TaskInfo> {
		return this.taskRequest('freecode/tasks/adopt', server, taskId);
	}

	/**
	 * openGateway opens the sidecar's MCP endpoints for VS Code's own chat
	 * (freecode/gateway/open): its token and one URL per server whose tools
	 * can come. Asked again, the same token and port, the servers as they are.
	 */
	openGateway(): Promise<p.GatewayResult> {
		return this.request('freecode/gateway/open', {});
	}

	/** serverRequest runs one of the requests that answer with the server's status, and applies it. */
	private async serverRequest<M extends ServerMethod>(method: M, params: p.FrontendRequests[M]['params']): Promise<p.ServerStatus> {
		const s: p.ServerStatus = await this.request(method, params);
		this.model.updateServer(s);
		return s;
	}

	start(name: string): Promise<p.ServerStatus> {
		return this.serverRequest('freecode/servers/start', { name });
	}
	stop(name: string): Promise<p.ServerStatus> {
		return this.serverRequest('freecode/servers/stop', { name });
	}
	restart(name: string): Promise<p.ServerStatus> {
		return this.serverRequest('freecode/servers/restart', { name });
	}
	/** approve approves the entry whose hash the user was shown (required to approve), or revokes the approval. */
	approve(name: string, approve: boolean, entryHash?: string): Promise<p.ServerStatus> {
		return this.serverRequest('freecode/servers/approve', { name, approve, entryHash });
	}
	login(name: string): Promise<p.ServerStatus> {
		return this.serverRequest('freecode/servers/login', { name });
	}
	logout(name: string): Promise<p.ServerStatus> {
		return this.serverRequest('freecode/servers/logout', { name });
	}

	/** resources lists one server's resources, or every connected server's. */
	async resources(server?: string): Promise<p.ResourceInfo[]> {
		return this.items('ResourceInfo', p.ResourceInfo, await this.send('freecode/resources', { server }), 'resources');
	}
	readResource(server: string, uri: string): Promise<p.ReadResourceResult> {
		return this.request('freecode/resources/read', { server, uri });
	}
	/** prompts lists one server's prompts, or every connected server's. */
	async prompts(server?: string): Promise<p.PromptInfo[]> {
		return this.items('PromptInfo', p.PromptInfo, await this.send('freecode/prompts', { server }), 'prompts');
	}
	getPrompt(server: string, name: string, args?: Record<string, string>): Promise<p.GetPromptResult> {
		return this.request('freecode/prompts/get', { server, name, arguments: args });
	}

	definitions(format: p.Format): Promise<p.DefinitionsResult> {
		return this.request('freecode/tools/definitions', { format });
	}

	/** execute runs a batch; cancelling token sends $/cancelRequest, which cancels every call still running. */
	execute(calls: p.ToolCall[], token?: CancellationToken): Promise<p.ExecuteResult> {
		return this.request('freecode/tools/execute', { calls }, token);
	}

	/** review lists a server's tools awaiting review, or accepts or rejects (freecode/tools/review). */
	async review(params: p.ReviewParams): Promise<p.ToolReview[]> {
		return (await this.request('freecode/tools/review', params)).reviews;
	}

	project(): Promise<p.Project> {
		return this.request('freecode/project', {});
	}

	/**
	 * removeAllow takes an "always allow" answer back
	 * (freecode/permissions/removeAllow): rule leaves the session and the
	 * file of scope. The tools' marks follow by freecode/tools/changed.
	 */
	removeAllow(rule: string, scope: p.PermissionScope): Promise<p.RemoveAllowResult> {
		return this.request('freecode/permissions/removeAllow', { rule, scope });
	}

	/**
	 * setSecret keeps a secret the user typed in a password input
	 * (freecode/secrets/set) and starts the servers that failed for the
	 * want of it; their statuses follow as notifications. The value goes in
	 * this one request and is kept nowhere here.
	 */
	setSecret(name: string, value: string): Promise<p.SecretSetResult> {
		return this.request('freecode/secrets/set', { name, value });
	}

	trust(trusted: boolean): Promise<p.TrustResult> {
		return this.request('freecode/project/trust', { trusted });
	}

	/** registrySearch searches the MCP Registry the sidecar asks (freecode/registry/search): at most limit servers, 0 all. */
	registrySearch(query: string, limit: number, refresh = false): Promise<p.RegistrySearchResult> {
		return this.request('freecode/registry/search', { query, limit, refresh: refresh || undefined });
	}

	/** registryValues says what installing a version of a registry server asks and how it would run (freecode/registry/values); nothing is written. */
	registryValues(name: string, version?: string): Promise<p.RegistryValuesResult> {
		return this.request('freecode/registry/values', { name, version });
	}

	/**
	 * registryInstall installs a registry server (freecode/registry/install):
	 * the values answered, secret ones too, go in this one request, which
	 * keeps the secrets in the secret store and writes one entry; its row
	 * comes as the sidecar's statuses do.
	 */
	registryInstall(params: p.RegistryInstallParams): Promise<p.RegistryInstallResult> {
		return this.request('freecode/registry/install', params);
	}

	/**
	 * acceptRules accepts the project's rules as the user was shown them
	 * awaiting review, named by hash (freecode/project/trust with rulesHash):
	 * the sidecar refuses (-32602) if the files changed since.
	 */
	acceptRules(hash: string): Promise<p.TrustResult> {
		return this.request('freecode/project/trust', { trusted: true, rulesHash: hash });
	}
}
