// Run-time shapes of the protocol types in protocol.ts. Each shape is typed
// against its interface: a field added, removed, renamed, made optional or
// given another type in protocol.ts does not compile until its shape says the
// same. The checks then reject, in JSON the Go side writes, a missing
// required field, an unknown field and a value of the wrong type or outside
// its enum, which is what keeps the two sides of the wire in step.
//
// Pure: no `vscode` import.

import type * as p from './protocol';

/** Check validates one value, appending "path: problem" lines to errs. V is the type it stands for. */
export type Check<V> = ((v: unknown, path: string, errs: string[]) => void) & {
	// Never set: it makes Check invariant in V, so a Check<string> cannot
	// stand where a Check<number> (or a Check<'a' | 'b'>) is expected.
	readonly __type?: (v: V) => V;
	/** What an object check's fields are, or an array check's items: for coverage. */
	readonly meta?: { fields?: Record<string, Field<unknown, boolean>>; item?: Check<unknown> };
};

export interface Field<V, O extends boolean> {
	optional: O;
	check: Check<V>;
}

type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];

/** Shape lists every field of T, each with its check and whether it may be left out. */
export type Shape<T> = {
	[K in keyof T]-?: Field<Exclude<T[K], undefined>, K extends OptionalKeys<T> ? true : false>;
};

function typed<V>(fn: (v: unknown, path: string, errs: string[]) => void): Check<V> {
	return fn as Check<V>;
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export const str = typed<string>((v, path, errs) => {
	if (typeof v !== 'string') errs.push(`${path}: want a string, got ${kind(v)}`);
});
export const num = typed<number>((v, path, errs) => {
	if (typeof v !== 'number' || !Number.isFinite(v)) errs.push(`${path}: want a number, got ${kind(v)}`);
});
export const bool = typed<boolean>((v, path, errs) => {
	if (typeof v !== 'boolean') errs.push(`${path}: want a boolean, got ${kind(v)}`);
});
/** strMap accepts an object whose values are all strings (env, headers). */
export const strMap = typed<Record<string, string>>((v, path, errs) => {
	if (typeof v !== 'object' || v === null || Array.isArray(v)) {
		errs.push(`${path}: want an object, got ${kind(v)}`);
		return;
	}
	for (const [k, x] of Object.entries(v)) str(x, `${path}.${k}`, errs);
});
/** anyValue accepts any JSON value, for fields the protocol leaves open (schemas, MCP payloads). */
export const anyValue = typed<unknown>(() => {});

/** enumOf takes every member of the union as a key, so a value added to the type must be added here. */
export function enumOf<T extends string>(members: Record<T, true>): Check<T> {
	const allowed = new Set<string>(Object.keys(members));
	return typed<T>((v, path, errs) => {
		if (typeof v !== 'string' || !allowed.has(v)) {
			errs.push(`${path}: want one of ${[...allowed].join(', ')}, got ${JSON.stringify(v)}`);
		}
	});
}

export function arrayOf<V>(item: Check<V>): Check<V[]> {
	const c = typed<V[]>((v, path, errs) => {
		if (!Array.isArray(v)) {
			errs.push(`${path}: want an array, got ${kind(v)}`);
			return;
		}
		v.forEach((x, i) => item(x, `${path}[${i}]`, errs));
	});
	return Object.assign(c, { meta: { item: item as Check<unknown> } });
}

export function req<V>(check: Check<V>): Field<V, false> {
	return { optional: false, check };
}
export function opt<V>(check: Check<V>): Field<V, true> {
	return { optional: true, check };
}

/** obj checks an object against a shape: required fields present, no field the shape does not name. */
export function obj<T>(shape: Shape<T>): Check<T> {
	const fields = Object.entries(shape) as [string, Field<unknown, boolean>][];
	const known = new Set(fields.map(([k]) => k));
	const c = typed<T>((v, path, errs) => {
		if (typeof v !== 'object' || v === null || Array.isArray(v)) {
			errs.push(`${path}: want an object, got ${kind(v)}`);
			return;
		}
		const o = v as Record<string, unknown>;
		for (const [key, f] of fields) {
			if (!(key in o) || o[key] === undefined) {
				if (!f.optional) errs.push(`${path}.${key}: missing`);
				continue;
			}
			f.check(o[key], `${path}.${key}`, errs);
		}
		for (const key of Object.keys(o)) {
			if (!known.has(key)) errs.push(`${path}.${key}: not a field of this type`);
		}
	});
	return Object.assign(c, { meta: { fields: shape as Record<string, Field<unknown, boolean>> } });
}

/**
 * fieldPaths lists every field path a check describes ("$.serverInfo.name",
 * "$.content[].text" is not one: open objects list nothing), and seenPaths
 * the ones a value fills: a fixture set that leaves a field out cannot
 * catch its rename, so the tests ask for every path.
 */
export function fieldPaths(check: Check<unknown>, path = '$'): string[] {
	const out: string[] = [];
	const m = check.meta;
	if (m?.fields) {
		for (const [k, f] of Object.entries(m.fields)) {
			out.push(`${path}.${k}`, ...fieldPaths(f.check, `${path}.${k}`));
		}
	}
	if (m?.item) out.push(...fieldPaths(m.item, `${path}[]`));
	return out;
}

export function seenPaths(check: Check<unknown>, v: unknown, path = '$', into = new Set<string>()): Set<string> {
	const m = check.meta;
	if (m?.fields && typeof v === 'object' && v !== null && !Array.isArray(v)) {
		for (const [k, f] of Object.entries(m.fields)) {
			const x = (v as Record<string, unknown>)[k];
			if (x === undefined) continue;
			into.add(`${path}.${k}`);
			seenPaths(f.check, x, `${path}.${k}`, into);
		}
	}
	if (m?.item && Array.isArray(v)) for (const x of v) seenPaths(m.item, x, `${path}[]`, into);
	return into;
}

/** validate returns every problem of v against check; empty means it conforms. */
export function validate<V>(check: Check<V>, v: unknown, path = '$'): string[] {
	const errs: string[] = [];
	check(v, path, errs);
	return errs;
}

/** is narrows v to V when it conforms to check. */
export function is<V>(check: Check<V>, v: unknown): v is V {
	return validate(check, v).length === 0;
}

// Pinned tool definitions.

const reviewKind = enumOf<p.ReviewKind>({ changed: true, new: true, removed: true });

/** boolOrStr accepts a hint's value: a boolean, or a string for the title. */
const boolOrStr = typed<boolean | string>((v, path, errs) => {
	if (typeof v !== 'boolean' && typeof v !== 'string') errs.push(`${path}: want a boolean or a string, got ${kind(v)}`);
});

const textChange = obj<p.TextChange>({ old: req(str), new: req(str), diff: req(str) });

const pointerChange = obj<p.PointerChange>({
	pointer: req(str),
	op: req(enumOf<p.PointerChange['op']>({ add: true, remove: true, replace: true, more: true })),
	old: opt(anyValue),
	new: opt(anyValue),
});

export const definitionChange = obj<p.DefinitionChange>({
	tool: req(str),
	kind: req(reviewKind),
	title: opt(textChange),
	description: opt(textChange),
	inputSchema: opt(arrayOf(pointerChange)),
	outputSchema: opt(arrayOf(pointerChange)),
	annotations: opt(
		arrayOf(
			obj<p.HintChange>({
				hint: req(
					enumOf<p.HintChange['hint']>({
						readOnlyHint: true,
						destructiveHint: true,
						idempotentHint: true,
						openWorldHint: true,
						title: true,
					}),
				),
				old: req(boolOrStr),
				new: req(boolOrStr),
			}),
		),
	),
});

export const serverState = enumOf<p.ServerState>({
	disabled: true,
	awaitingApproval: true,
	needsAuth: true,
	connecting: true,
	connected: true,
	reconnecting: true,
	failed: true,
	stopped: true,
	removed: true,
	idle: true,
});

export const serverStatus = obj<p.ServerStatus>({
	name: req(str),
	scope: req(enumOf<p.Scope>({ user: true, project: true })),
	type: req(enumOf<'local' | 'remote'>({ local: true, remote: true })),
	transport: opt(enumOf<'stdio' | 'http' | 'sse'>({ stdio: true, http: true, sse: true })),
	state: req(serverState),
	toolCount: req(num),
	pid: opt(num),
	serverInfo: opt(obj<p.ServerInfo>({ name: req(str), version: req(str) })),
	protocolVersion: opt(str),
	connectedAt: opt(str),
	lastPingMs: opt(num),
	lastError: opt(str),
	lastErrorKind: opt(
		enumOf<p.FailureKind>({ commandNotFound: true, exited: true, packageNotFound: true, timeout: true, config: true, other: true }),
	),
	exitCode: opt(num),
	retry: opt(obj<p.RetryStatus>({ attempt: req(num), max: req(num), nextAt: req(str) })),
	stderrTail: opt(arrayOf(str)),
	command: opt(arrayOf(str)),
	url: opt(str),
	toolListCut: opt(str),
	sandbox: opt(str),
	approval: opt(
		obj<p.ServerApproval>({
			entryHash: req(str),
			command: opt(arrayOf(str)),
			cwd: opt(str),
			env: opt(strMap),
			inheritEnv: opt(bool),
			url: opt(str),
			transport: opt(enumOf<'auto' | 'http' | 'sse'>({ auto: true, http: true, sse: true })),
			headers: opt(strMap),
			caBundle: opt(str),
			clientCert: opt(str),
			clientKey: opt(str),
			oauth: opt(
				obj<p.ApprovalOAuth>({
					clientId: opt(str),
					clientSecret: opt(str),
					clientMetadataUrl: opt(str),
					scopes: opt(arrayOf(str)),
					callbackPort: opt(num),
				}),
			),
			start: opt(enumOf<'onDemand'>({ onDemand: true })),
			deferTools: opt(bool),
			timeout: opt(num),
			toolTimeout: opt(num),
			idleTimeout: opt(num),
			maxMessageBytes: opt(num),
			protocolVersion: opt(str),
			sandbox: opt(str),
			pendingReviews: opt(arrayOf(definitionChange)),
		}),
	),
});

export const approveParams = obj<p.ApproveParams>({ name: req(str), approve: req(bool), entryHash: opt(str) });

export const toolInfo = obj<p.ToolInfo>({
	id: req(str),
	server: opt(str),
	name: req(str),
	title: opt(str),
	description: req(str),
	readOnly: req(bool),
	destructive: opt(bool),
	openWorld: opt(bool),
	inputSchema: req(anyValue),
	alias: opt(str),
	definitionChanged: opt(bool),
	new: opt(bool),
	ui: opt(
		obj<p.ToolUI>({
			resourceUri: opt(str),
			visibility: req(arrayOf(enumOf<p.Audience>({ model: true, app: true }))),
		}),
	),
	allowedBy: opt(
		obj<p.AllowedBy>({
			rule: req(str),
			source: req(enumOf<p.RuleSource>({ user: true, project: true, local: true, session: true })),
			path: opt(str),
		}),
	),
});

export const toolReview = obj<p.ToolReview>({
	server: req(str),
	tool: req(str),
	id: req(str),
	kind: req(reviewKind),
	rejected: opt(bool),
	hidden: opt(bool),
	hash: req(str),
	diff: req(str),
	change: req(definitionChange),
});

export const reviewParams = obj<p.ReviewParams>({
	server: req(str),
	tool: opt(str),
	action: req(enumOf<p.ReviewAction>({ diff: true, accept: true, reject: true })),
	hash: opt(str),
});

export const reviewResult = obj<p.ReviewResult>({ reviews: req(arrayOf(toolReview)) });

export const reviewNeeded = obj<p.ReviewNeededParams>({ server: req(str), reviews: req(arrayOf(toolReview)) });

// McpContent is open (each content type has its own fields): only its
// discriminator is checked.
const mcpContent = typed<p.McpContent>((v, path, errs) => {
	if (typeof v !== 'object' || v === null || Array.isArray(v)) {
		errs.push(`${path}: want an object, got ${kind(v)}`);
		return;
	}
	str((v as Record<string, unknown>).type, `${path}.type`, errs);
});

export const toolCall = obj<p.ToolCall>({
	callId: req(str),
	tool: req(str),
	arguments: req(anyValue),
	app: opt(obj<{ server: string }>({ server: req(str) })),
});

const truncation = obj<p.Truncation>({ shownChars: req(num), totalChars: req(num), savedTo: req(str) });

export const taskInfo = obj<p.TaskInfo>({
	server: req(str),
	taskId: req(str),
	tool: req(str),
	callId: req(str),
	status: req(enumOf<p.TaskStatus>({ working: true, input_required: true, completed: true, failed: true, cancelled: true })),
	statusMessage: opt(str),
	createdAt: req(str),
	updatedAt: req(str),
	result: opt(
		obj<NonNullable<p.TaskInfo['result']>>({
			content: req(arrayOf(mcpContent)),
			structuredContent: opt(anyValue),
			isError: req(bool),
			truncated: opt(truncation),
		}),
	),
	error: opt(str),
	mine: opt(bool),
});

export const toolResult = obj<p.ToolResult>({
	callId: req(str),
	content: req(arrayOf(mcpContent)),
	structuredContent: opt(anyValue),
	isError: req(bool),
	decision: req(enumOf<p.CallDecision>({ allowed: true, asked: true, denied: true, invalid: true })),
	durationMs: req(num),
	truncated: opt(truncation),
	outcomeUnknown: opt(bool),
	task: opt(taskInfo),
});

export const permissionRequest = obj<p.PermissionRequest>({
	callId: req(str),
	tool: req(str),
	server: opt(str),
	arguments: req(anyValue),
	readOnly: req(bool),
	reason: req(str),
	projectTrusted: req(bool),
	review: opt(obj<p.PermissionReview>({ kind: req(reviewKind), hash: req(str), diff: req(str), change: req(definitionChange) })),
	app: opt(obj<{ server: string }>({ server: req(str) })),
});

export const permissionResponse = obj<p.PermissionResponse>({
	decision: req(enumOf<p.PermissionDecision>({ allowOnce: true, allowAlways: true, deny: true })),
	scope: opt(enumOf<p.RuleScope>({ local: true, user: true })),
	acceptDefinition: opt(bool),
});

export const toolsChanged = obj<p.ToolsChangedParams>({
	hashes: req(obj<p.ToolsChangedParams['hashes']>({ anthropic: req(str), openai: req(str) })),
	server: opt(str),
	reason: req(str),
});

export const serverLog = obj<p.ServerLogParams>({
	name: req(str),
	level: req(enumOf<p.LogLevel>({ debug: true, info: true, warning: true, error: true })),
	source: req(enumOf<'stderr' | 'mcp' | 'freecode'>({ stderr: true, mcp: true, freecode: true })),
	message: req(str),
	time: req(str),
});

export const toolProgress = obj<p.ToolProgressParams>({
	callId: req(str),
	progress: req(num),
	total: opt(num),
	message: opt(str),
});

export const configProblems = obj<p.ConfigProblemsParams>({
	path: req(str),
	problems: req(
		arrayOf(
			obj<p.ConfigProblem>({
				message: req(str),
				line: opt(num),
				column: opt(num),
				key: opt(str),
				severity: req(enumOf<'error' | 'warning'>({ error: true, warning: true })),
			}),
		),
	),
	lastGood: opt(bool),
	summary: opt(str),
});

export const rulesReview = obj<p.RulesReview>({
	hash: opt(str),
	files: req(
		arrayOf(
			obj<p.RuleFileChange>({
				path: req(str),
				source: req(enumOf<'project' | 'local'>({ project: true, local: true })),
				allow: opt(arrayOf(str)),
				ask: opt(arrayOf(str)),
				deny: opt(arrayOf(str)),
			}),
		),
	),
});

export const projectResult = obj<p.ProjectResult>({
	root: opt(str),
	projectTrusted: req(bool),
	configPath: req(str),
	settingsPaths: req(obj<p.SettingsPaths>({ user: req(str), project: opt(str), local: opt(str) })),
	problems: opt(arrayOf(configProblems)),
	pendingRules: opt(rulesReview),
});

export const projectTrustParams = obj<p.ProjectTrustParams>({ trusted: req(bool), rulesHash: opt(str) });
export const removeAllowParams = obj<p.RemoveAllowParams>({ rule: req(str), scope: req(enumOf<p.RuleScope>({ local: true, user: true })) });
export const removeAllowResult = obj<p.RemoveAllowResult>({ path: req(str), removed: req(bool) });

export const definitionsResult = obj<p.DefinitionsResult>({
	hash: req(str),
	tools: req(arrayOf(anyValue)),
});

const role = enumOf<'user' | 'assistant'>({ user: true, assistant: true });

export const initializationOptions = obj<p.InitializationOptions>({
	configPath: opt(str),
	token: opt(str),
	capabilities: opt(obj<p.ClientCapabilities>({ elicitation: opt(bool), sampling: opt(bool) })),
});

export const elicitationRequest = obj<p.ElicitationRequest>({
	server: req(str),
	callId: opt(str),
	mode: req(enumOf<p.ElicitationMode>({ form: true, url: true })),
	message: req(str),
	requestedSchema: opt(anyValue),
	url: opt(str),
});

const record = typed<Record<string, unknown>>((v, path, errs) => {
	if (typeof v !== 'object' || v === null || Array.isArray(v)) errs.push(`${path}: want an object, got ${kind(v)}`);
});

export const elicitationResponse = obj<p.ElicitationResponse>({
	action: req(enumOf<p.ElicitationAction>({ accept: true, decline: true, cancel: true })),
	content: opt(record),
});

export const samplingRequest = obj<p.SamplingRequest>({
	server: req(str),
	callId: opt(str),
	params: req(anyValue),
});

export const samplingResult = obj<p.SamplingResult>({
	role: req(role),
	content: req(mcpContent),
	model: req(str),
	stopReason: opt(str),
});

export const resourceInfo = obj<p.ResourceInfo>({
	server: req(str),
	uri: req(str),
	name: req(str),
	title: opt(str),
	mimeType: opt(str),
	description: opt(str),
});

export const readResourceResult = obj<p.ReadResourceResult>({
	contents: req(arrayOf(obj<p.ResourceContents>({ uri: req(str), mimeType: opt(str), text: opt(str), blob: opt(str), _meta: opt(anyValue) }))),
});

export const promptInfo = obj<p.PromptInfo>({
	server: req(str),
	name: req(str),
	title: opt(str),
	description: opt(str),
	arguments: opt(
		arrayOf(obj<p.PromptArgument>({ name: req(str), title: opt(str), description: opt(str), required: opt(bool) })),
	),
});

export const getPromptResult = obj<p.GetPromptResult>({
	description: opt(str),
	messages: req(arrayOf(obj<p.PromptMessage>({ role: req(role), content: req(mcpContent) }))),
});

export const listChanged = obj<p.ListChangedParams>({
	server: req(str),
	reason: req(str),
});

/**
 * Fixtures maps the file names under test/fixtures (the JSON the Go side
 * writes from its own types, one array of examples per file) to the shape
 * each must conform to.
 */
export const fixtureShapes: Record<string, Check<unknown>> = {
	'ServerStatus.json': serverStatus as Check<unknown>,
	'ToolInfo.json': toolInfo as Check<unknown>,
	'ToolCall.json': toolCall as Check<unknown>,
	'ToolResult.json': toolResult as Check<unknown>,
	'TaskInfo.json': taskInfo as Check<unknown>,
	'PermissionRequest.json': permissionRequest as Check<unknown>,
	'PermissionResponse.json': permissionResponse as Check<unknown>,
	'ToolsChanged.json': toolsChanged as Check<unknown>,
	'ServerLog.json': serverLog as Check<unknown>,
	'ToolProgress.json': toolProgress as Check<unknown>,
	'ConfigProblems.json': configProblems as Check<unknown>,
	'Project.json': projectResult as Check<unknown>,
	'InitializationOptions.json': initializationOptions as Check<unknown>,
	'ElicitationRequest.json': elicitationRequest as Check<unknown>,
	'ElicitationResponse.json': elicitationResponse as Check<unknown>,
	'SamplingRequest.json': samplingRequest as Check<unknown>,
	'SamplingResult.json': samplingResult as Check<unknown>,
	'ResourceInfo.json': resourceInfo as Check<unknown>,
	'ReadResourceResult.json': readResourceResult as Check<unknown>,
	'PromptInfo.json': promptInfo as Check<unknown>,
	'GetPromptResult.json': getPromptResult as Check<unknown>,
	'ListChanged.json': listChanged as Check<unknown>,
	'ReviewParams.json': reviewParams as Check<unknown>,
	'ApproveParams.json': approveParams as Check<unknown>,
	'ReviewResult.json': reviewResult as Check<unknown>,
	'ReviewNeeded.json': reviewNeeded as Check<unknown>,
	'RulesReview.json': rulesReview as Check<unknown>,
	'TrustParams.json': projectTrustParams as Check<unknown>,
	'RemoveAllowParams.json': removeAllowParams as Check<unknown>,
	'RemoveAllowResult.json': removeAllowResult as Check<unknown>,
};
