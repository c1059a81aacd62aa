// Session binds one JSON-RPC connection to the sidecar (the LanguageClient in
// VS Code, a bare vscode-jsonrpc connection in the integration test) to the
// servers model: it answers the sidecar's requests, applies its notifications
// and wraps the requests the commands send. The view is updated from
// notifications only; a request goes out when a notification says something
// changed, never on a timer. Pure: no `vscode` import.

import { ResponseError } from 'vscode-jsonrpc';
import type { ServersModel } from './model';
import { DENIED } from './permissionChoices';
import * as p from './protocol';
import * as shapes from './protocolShapes';

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
	serverLog?(log: p.ServerLogParams): void;
	configProblems?(problems: p.ConfigProblemsParams): void;
	toolProgress?(progress: p.ToolProgressParams): void;
	toolsChanged?(changed: p.ToolsChangedParams): void;
	/** Ask the user an MCP server's form or URL; a rejection or a bad answer counts as decline. Without it, every one is declined. */
	askElicitation?(req: p.ElicitationRequest, token: CancellationToken): Promise<p.ElicitationResponse>;
	/** Show an MCP server's sampling request and run it if the user allows; reject (a ResponseError passes as it is) to refuse. */
	askSampling?(req: p.SamplingRequest, token: CancellationToken): Promise<p.SamplingResult>;
	/** A server's tools awaiting review changed (the tool list is read again too). */
	reviewNeeded?(reviews: p.ReviewNeededParams): void;
	/** What of the trusted project's rules awaits review changed; no files once nothing does. */
	rulesReview?(review: p.RulesReview): void;
	/** Something the sidecar sent did not fit the protocol, or a refresh failed. */
	warn?(message: string): void;
}

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
			this.conn.onRequest(p.ServerRequests.permissionRequest, (params, token) => this.onPermission(params, token)),
			this.conn.onNotification(p.Notifications.serversStatus, (params) => this.onStatus(params)),
			this.conn.onNotification(p.Notifications.toolsChanged, (params) => this.onToolsChanged(params)),
			this.conn.onNotification(p.Notifications.serversLog, (params) => {
				if (this.check('freecode/servers/log', shapes.serverLog, params)) this.hooks.serverLog?.(params);
			}),
			this.conn.onNotification(p.Notifications.configProblems, (params) => {
				if (!this.check('freecode/config/problems', shapes.configProblems, params)) return;
				// The view and the status bar say it too, not only the Problems panel.
				this.model.setProblems(params);
				this.hooks.configProblems?.(params);
			}),
			this.conn.onNotification(p.Notifications.toolsProgress, (params) => {
				if (this.check('freecode/tools/progress', shapes.toolProgress, params)) this.hooks.toolProgress?.(params);
			}),
			this.conn.onRequest(p.ServerRequests.elicitationRequest, (params, token) => this.onElicitation(params, token)),
			this.conn.onRequest(p.ServerRequests.samplingRequest, (params, token) => this.onSampling(params, token)),
			this.conn.onNotification(p.Notifications.resourcesChanged, (params) => {
				if (this.check('freecode/resources/changed', shapes.listChanged, params)) void this.readList('resources', params.server);
			}),
			this.conn.onNotification(p.Notifications.promptsChanged, (params) => {
				if (this.check('freecode/prompts/changed', shapes.listChanged, params)) void this.readList('prompts', params.server);
			}),
			this.conn.onNotification(p.Notifications.reviewNeeded, (params) => this.onReviewNeeded(params)),
			this.conn.onNotification(p.Notifications.tasksChanged, (params) => {
				if (this.check(p.Notifications.tasksChanged, shapes.taskInfo, params)) this.model.updateTask(params);
			}),
			this.conn.onNotification(p.Notifications.rulesReviewNeeded, (params) => {
				if (this.check(p.Notifications.rulesReviewNeeded, shapes.rulesReview, params)) this.hooks.rulesReview?.(params);
			}),
		];
		return {
			dispose: () => {
				this.closed = true;
				subs.forEach((s) => s.dispose());
			},
		};
	}

	private check<V>(what: string, shape: shapes.Check<V>, v: unknown): v is V {
		const errs = shapes.validate(shape, v);
		if (errs.length === 0) return true;
		this.hooks.warn?.(`ignored a ${what} that does not fit the protocol: ${errs.slice(0, 3).join('; ')}`);
		return false;
	}

	private async onPermission(params: unknown, token: CancellationToken): Promise<p.PermissionResponse> {
		// A request we cannot read is not one the user can judge: deny it.
		if (!this.check('freecode/permission/request', shapes.permissionRequest, params)) return DENIED;
		try {
			const answer = await this.hooks.askPermission(params, token);
			if (shapes.is(shapes.permissionResponse, answer)) return answer;
			this.hooks.warn?.(`the permission prompt answered ${JSON.stringify(answer)}, which is not in the protocol; answering deny`);
			return DENIED;
		} catch (e) {
			this.hooks.warn?.(`permission prompt failed, answering deny: ${(e as Error).message}`);
			return DENIED;
		}
	}

	private async onElicitation(params: unknown, token: CancellationToken): Promise<p.ElicitationResponse> {
		const decline: p.ElicitationResponse = { action: 'decline' };
		if (!this.check('freecode/elicitation/request', shapes.elicitationRequest, params) || !this.hooks.askElicitation) return decline;
		try {
			const answer = await this.hooks.askElicitation(params, token);
			if (shapes.is(shapes.elicitationResponse, answer)) return answer;
			this.hooks.warn?.(`the form answered ${JSON.stringify(answer)}, which is not in the protocol; declining`);
		} catch (e) {
			this.hooks.warn?.(`the form failed, declining: ${(e as Error).message}`);
		}
		return decline;
	}

	private async onSampling(params: unknown, token: CancellationToken): Promise<p.SamplingResult> {
		if (!this.check('freecode/sampling/request', shapes.samplingRequest, params)) {
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
		if (!this.check('the sampling answer', shapes.samplingResult, result)) {
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
			if (kind === 'resources') {
				const r = await this.resources(server);
				set(r.filter((x) => this.check('ResourceInfo', shapes.resourceInfo, x)));
			} else {
				const r = await this.prompts(server);
				set(r.filter((x) => this.check('PromptInfo', shapes.promptInfo, x)));
			}
		} catch (e) {
			set([]);
			// A server that stopped meanwhile has none, and nothing is wrong.
			if (!this.closed && this.model.server(server)?.state === 'connected') {
				this.hooks.warn?.(`reading the ${kind} of ${server} failed: ${(e as Error).message}`);
			}
		}
	}

	private onStatus(params: unknown): void {
		if (!this.check('freecode/servers/status', shapes.serverStatus, params)) return;
		this.pendingStatuses?.push(params);
		this.model.updateServer(params);
	}

	private onToolsChanged(params: unknown): void {
		if (!this.check('freecode/tools/changed', shapes.toolsChanged, params)) return;
		this.hooks.toolsChanged?.(params);
		// The tool set changed. The servers are read with the tools, so the
		// tree's counts and its tool nodes come from one moment.
		void this.refresh();
	}

	private onReviewNeeded(params: unknown): void {
		if (!this.check('freecode/tools/reviewNeeded', shapes.reviewNeeded, params)) return;
		this.hooks.reviewNeeded?.(params);
		// The marks of the tools changed; the provider definitions' hashes
		// may not have (models keep the accepted definition), so no
		// tools/changed comes for it.
		void this.refresh();
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
			const [servers, tools] = await Promise.all([
				this.conn.sendRequest<p.ServersResult>(p.Requests.servers, {}),
				this.conn.sendRequest<p.ToolsResult>(p.Requests.tools, {}),
			]);
			if (this.closed) return;
			const statuses = (servers?.servers ?? []).filter((s) => this.check('ServerStatus', shapes.serverStatus, s));
			const later = this.pendingStatuses;
			this.model.setServers(statuses);
			for (const s of later) this.model.updateServer(s);
			this.model.setTools((tools?.tools ?? []).filter((t) => this.check('ToolInfo', shapes.toolInfo, t)));
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
			const r = await this.conn.sendRequest<p.TasksResult>(p.Requests.tasks, {});
			if (this.closed) return;
			this.model.setTasks((r?.tasks ?? []).filter((t) => this.check('TaskInfo', shapes.taskInfo, t)));
		} catch (e) {
			if (!this.closed) this.hooks.warn?.(`reading the tasks from the sidecar failed: ${(e as Error).message}`);
		}
	}

	/** cancelTask cancels a running task of ours on its server (freecode/tasks/cancel); its end comes as freecode/tasks/changed. */
	async cancelTask(server: string, taskId: string): Promise<p.TaskInfo> {
		const t = await this.conn.sendRequest<p.TaskInfo>(p.Requests.tasksCancel, { server, taskId } satisfies p.TaskCancelParams);
		if (this.check(p.Requests.tasksCancel, shapes.taskInfo, t)) this.model.updateTask(t);
		return t;
	}

	/** adoptTask makes another frontend's task ours (freecode/tasks/adopt): its result, its questions and its cancel. */
	async adoptTask(server: string, taskId: string): Promise<p.TaskInfo> {
		const t = await this.conn.sendRequest<p.TaskInfo>(p.Requests.tasksAdopt, { server, taskId } satisfies p.TaskAdoptParams);
		if (this.check(p.Requests.tasksAdopt, shapes.taskInfo, t)) this.model.updateTask(t);
		return t;
	}

	private async serverRequest(method: string, params: unknown): Promise<p.ServerStatus> {
		const s = await this.conn.sendRequest<p.ServerStatus>(method, params);
		if (this.check(method, shapes.serverStatus, s)) this.model.updateServer(s);
		return s;
	}

	start(name: string): Promise<p.ServerStatus> {
		return this.serverRequest(p.Requests.serversStart, { name } satisfies p.ServerNameParams);
	}
	stop(name: string): Promise<p.ServerStatus> {
		return this.serverRequest(p.Requests.serversStop, { name } satisfies p.ServerNameParams);
	}
	restart(name: string): Promise<p.ServerStatus> {
		return this.serverRequest(p.Requests.serversRestart, { name } satisfies p.ServerNameParams);
	}
	/** approve approves the entry whose hash the user was shown (required to approve), or revokes the approval. */
	approve(name: string, approve: boolean, entryHash?: string): Promise<p.ServerStatus> {
		return this.serverRequest(p.Requests.serversApprove, { name, approve, entryHash } satisfies p.ApproveParams);
	}
	login(name: string): Promise<p.ServerStatus> {
		return this.serverRequest(p.Requests.serversLogin, { name } satisfies p.ServerNameParams);
	}
	logout(name: string): Promise<p.ServerStatus> {
		return this.serverRequest(p.Requests.serversLogout, { name } satisfies p.ServerNameParams);
	}

	async resources(server?: string): Promise<p.ResourceInfo[]> {
		const r = await this.conn.sendRequest<p.ResourcesResult>(p.Requests.resources, { server } satisfies p.ListParams);
		return r?.resources ?? [];
	}
	readResource(server: string, uri: string): Promise<p.ReadResourceResult> {
		return this.conn.sendRequest(p.Requests.resourcesRead, { server, uri } satisfies p.ResourceReadParams);
	}
	async prompts(server?: string): Promise<p.PromptInfo[]> {
		const r = await this.conn.sendRequest<p.PromptsResult>(p.Requests.prompts, { server } satisfies p.ListParams);
		return r?.prompts ?? [];
	}
	getPrompt(server: string, name: string, args?: Record<string, string>): Promise<p.GetPromptResult> {
		return this.conn.sendRequest(p.Requests.promptsGet, { server, name, arguments: args } satisfies p.PromptGetParams);
	}

	definitions(format: p.DefinitionsFormat): Promise<p.DefinitionsResult> {
		return this.conn.sendRequest(p.Requests.toolsDefinitions, { format } satisfies p.DefinitionsParams);
	}

	/** execute runs a batch; cancelling token sends $/cancelRequest, which cancels every call still running. */
	execute(calls: p.ToolCall[], token?: CancellationToken): Promise<p.ExecuteResult> {
		const params = { calls } satisfies p.ExecuteParams;
		// vscode-jsonrpc takes a trailing argument for a token only when it
		// is one: an undefined one would make the params positional, [params,
		// null], which the sidecar rightly refuses.
		if (token) return this.conn.sendRequest(p.Requests.toolsExecute, params, token);
		return this.conn.sendRequest(p.Requests.toolsExecute, params);
	}

	/** review lists a server's tools awaiting review, or accepts or rejects (freecode/tools/review). */
	async review(params: p.ReviewParams): Promise<p.ToolReview[]> {
		const res = await this.conn.sendRequest<p.ReviewResult>(p.Requests.toolsReview, params);
		if (!this.check(p.Requests.toolsReview, shapes.reviewResult, res)) return [];
		return res.reviews;
	}

	project(): Promise<p.ProjectResult> {
		return this.conn.sendRequest(p.Requests.project, {});
	}

	/**
	 * removeAllow takes an "always allow" answer back
	 * (freecode/permissions/removeAllow): rule leaves the session and the
	 * file of scope. The tools' marks follow by freecode/tools/changed.
	 */
	async removeAllow(rule: string, scope: p.RuleScope): Promise<p.RemoveAllowResult> {
		const r = await this.conn.sendRequest<p.RemoveAllowResult>(p.Requests.permissionsRemoveAllow, { rule, scope } satisfies p.RemoveAllowParams);
		if (!this.check(p.Requests.permissionsRemoveAllow, shapes.removeAllowResult, r)) throw new Error('the sidecar answered removeAllow with something outside the protocol');
		return r;
	}

	trust(trusted: boolean): Promise<p.ProjectTrustResult> {
		return this.conn.sendRequest(p.Requests.projectTrust, { trusted } satisfies p.ProjectTrustParams);
	}

	/**
	 * acceptRules accepts the project's rules as the user was shown them
	 * awaiting review, named by hash (freecode/project/trust with rulesHash):
	 * the sidecar refuses (-32602) if the files changed since.
	 */
	acceptRules(hash: string): Promise<p.ProjectTrustResult> {
		return this.conn.sendRequest(p.Requests.projectTrust, { trusted: true, rulesHash: hash } satisfies p.ProjectTrustParams);
	}
}
