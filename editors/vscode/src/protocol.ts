// The sidecar's JSON-RPC contract, as the extension sees it: every method and
// notification name, and the types of their params and results. The names are
// fixed by the protocol (the Go sidecar, the CLI's live commands and other
// frontends use them too); test/protocol.test.ts checks these types against
// JSON written by the Go side, so a rename on either side fails a test.
//
// This module is pure: no `vscode` import, so the headless tests load it.

/** The protocol version the extension speaks (initialize's capabilities.experimental.freecode). */
export const PROTOCOL_VERSION = 1;

/** JSON-RPC error codes the sidecar uses besides the standard ones. */
export const ErrorCodes = {
	InvalidParams: -32602,
	ServerNotInitialized: -32002,
	RequestCancelled: -32800,
	/** No such MCP server, or no such tool. */
	NoSuchServerOrTool: -32001,
	/** The task is another frontend's, or no frontend's: freecode/tasks/adopt makes it ours first. */
	NotYourTask: -32003,
} as const;

/** Requests the extension sends to the sidecar. */
export const Requests = {
	servers: 'freecode/servers',
	serversStart: 'freecode/servers/start',
	serversStop: 'freecode/servers/stop',
	serversRestart: 'freecode/servers/restart',
	serversApprove: 'freecode/servers/approve',
	serversLogin: 'freecode/servers/login',
	serversLogout: 'freecode/servers/logout',
	tools: 'freecode/tools',
	toolsDefinitions: 'freecode/tools/definitions',
	toolsExecute: 'freecode/tools/execute',
	permissions: 'freecode/permissions',
	project: 'freecode/project',
	projectTrust: 'freecode/project/trust',
	resources: 'freecode/resources',
	resourcesRead: 'freecode/resources/read',
	prompts: 'freecode/prompts',
	promptsGet: 'freecode/prompts/get',
	toolsReview: 'freecode/tools/review',
	tasks: 'freecode/tasks',
	tasksCancel: 'freecode/tasks/cancel',
	tasksAdopt: 'freecode/tasks/adopt',
	permissionsRemoveAllow: 'freecode/permissions/removeAllow',
} as const;

/** Requests the sidecar sends to the extension. */
export const ServerRequests = {
	permissionRequest: 'freecode/permission/request',
	elicitationRequest: 'freecode/elicitation/request',
	samplingRequest: 'freecode/sampling/request',
} as const;

/** Notifications the sidecar sends to the extension. */
export const Notifications = {
	toolsChanged: 'freecode/tools/changed',
	serversStatus: 'freecode/servers/status',
	serversLog: 'freecode/servers/log',
	toolsProgress: 'freecode/tools/progress',
	configProblems: 'freecode/config/problems',
	resourcesChanged: 'freecode/resources/changed',
	promptsChanged: 'freecode/prompts/changed',
	reviewNeeded: 'freecode/tools/reviewNeeded',
	tasksChanged: 'freecode/tasks/changed',
	rulesReviewNeeded: 'freecode/rules/reviewNeeded',
} as const;

/** Where a server's entry comes from: the user's config or a project's settings. */
export type Scope = 'user' | 'project';

/** Every state a server can be in. */
export type ServerState =
	| 'disabled'
	| 'awaitingApproval'
	| 'needsAuth'
	| 'connecting'
	| 'connected'
	| 'reconnecting'
	| 'failed'
	| 'stopped'
	/** A server's last freecode/servers/status once its entry left the config; never in freecode/servers. */
	| 'removed'
	/** Started on demand and not running: its tools are registered, a call starts it. */
	| 'idle';

/** ServerStates lists ServerState's values, for code that needs them at run time. */
export const ServerStates: readonly ServerState[] = [
	'disabled',
	'awaitingApproval',
	'needsAuth',
	'connecting',
	'connected',
	'reconnecting',
	'failed',
	'stopped',
	'removed',
	'idle',
];

/** The name and version a server reports in initialize. */
export interface ServerInfo {
	name: string;
	version: string;
}

export type FailureKind = 'commandNotFound' | 'exited' | 'packageNotFound' | 'timeout' | 'config' | 'other';
export interface RetryStatus {
	/** The retry that comes next: 1 for the first. */
	attempt: number;
	max: number;
	/** RFC 3339 time. */
	nextAt: string;
}

/** ServerStatus is one MCP server as the sidecar runs it (freecode/servers, freecode/servers/status). */
export interface ServerStatus {
	name: string;
	scope: Scope;
	type: 'local' | 'remote';
	transport?: 'stdio' | 'http' | 'sse';
	state: ServerState;
	toolCount: number;
	pid?: number;
	serverInfo?: ServerInfo;
	protocolVersion?: string;
	/** RFC 3339 time. */
	connectedAt?: string;
	lastPingMs?: number;
	/** What went wrong last, in the user's terms first (docs/protocol.md, "Failures"). */
	lastError?: string;
	lastErrorKind?: FailureKind;
	/** The exit code of the process whose exit lastError tells. */
	exitCode?: number;
	/** Set while a failed connect waits for its next try: "retrying attempt/max in (nextAt - now)". */
	retry?: RetryStatus;
	stderrTail?: string[];
	/** A local server's argv as configured, ${env:NAME} unexpanded: what approving a project server would run. */
	command?: string[];
	/** A remote server's URL, its secrets shown as ***. */
	url?: string;
	/** Set when the server's tool list was cut short, and says why. */
	toolListCut?: string;
	/** Set while a project server awaits approval: everything approving it allows, and the hash to approve it by. */
	approval?: ServerApproval;
	/** The sandbox a local server was last started in, in a line, made from the same policy as the sandbox; absent if not sandboxed or not started. */
	sandbox?: string;
}

/**
 * ServerApproval is what approving a project server lets the project do, as
 * its .freecode/settings.json has it: ${env:NAME} unexpanded, relative paths
 * resolved against the project, nothing redacted (it is the repository's
 * text). Show all of it before the user approves.
 */
export interface ServerApproval {
	/** Names the entry: freecode/servers/approve takes it back and refuses it once the entry says something else. */
	entryHash: string;
	command?: string[];
	cwd?: string;
	/** The variables the server is given, values as written. */
	env?: Record<string, string>;
	/** The server gets the sidecar's whole environment, API keys included. */
	inheritEnv?: boolean;
	url?: string;
	/** A remote entry's; auto tries both. */
	transport?: 'auto' | 'http' | 'sse';
	headers?: Record<string, string>;
	caBundle?: string;
	clientCert?: string;
	clientKey?: string;
	oauth?: ApprovalOAuth;
	/** How it would run and how what it lists is checked, each where the entry sets it (absent: the default). */
	start?: 'onDemand';
	deferTools?: boolean;
	/** Milliseconds, as the config file has them. */
	timeout?: number;
	toolTimeout?: number;
	idleTimeout?: number;
	maxMessageBytes?: number;
	protocolVersion?: string;
	/** The sandbox a local server would run in, in a line, or that it would run unsandboxed. */
	sandbox?: string;
	/** Definitions the server listed when it last ran that differ from those accepted, or are new: they still await review after approval. */
	pendingReviews?: DefinitionChange[];
}

/** ApprovalOAuth is a project server's "oauth" key, as written. */
export interface ApprovalOAuth {
	clientId?: string;
	clientSecret?: string;
	clientMetadataUrl?: string;
	scopes?: string[];
	callbackPort?: number;
}

/** ToolInfo is one tool of the registry (freecode/tools). */
export interface ToolInfo {
	/** mcp__<server>__<tool>, or a built-in's name. */
	id: string;
	server?: string;
	name: string;
	title?: string;
	description: string;
	readOnly: boolean;
	destructive?: boolean;
	openWorld?: boolean;
	inputSchema: unknown;
	/** The provider-facing name when the id is over 64 characters. */
	alias?: string;
	/**
	 * The server lists another definition than the one the user accepted:
	 * this is the accepted one, and calls ask until the change is accepted.
	 */
	definitionChanged?: boolean;
	/** New on a server whose tools were pinned already, not accepted yet. */
	new?: boolean;
	/** What the tool declares of the MCP Apps extension; absent: nothing. */
	ui?: ToolUI;
	/**
	 * The allow rule that lets the tool's calls run without asking, as the
	 * rules decide now; absent when none does. freecode/tools/changed comes
	 * when the rules change.
	 */
	allowedBy?: AllowedBy;
}

/** AllowedBy names an allow rule: its pattern, its source and its file (none for a session rule). */
export interface AllowedBy {
	rule: string;
	source: RuleSource;
	path?: string;
}

/** Who an MCP Apps tool is for. */
export type Audience = 'model' | 'app';

/** A tool's part of the MCP Apps extension (SEP-1865). */
export interface ToolUI {
	/** The ui:// resource that renders the tool's results (freecode/resources/read). */
	resourceUri?: string;
	/** Without 'model' no model is offered the tool; without 'app' no app may call it. */
	visibility: Audience[];
}

/** ToolCall is one call of a batch; tool is an id or an alias. */
export interface ToolCall {
	callId: string;
	tool: string;
	arguments: unknown;
	/** Set when an MCP Apps view makes the call, not a model: the view's server. */
	app?: { server: string };
}

/** McpContent is one MCP content block (text, image, audio, resource link, embedded resource). */
export interface McpContent {
	type: string;
	text?: string;
	[key: string]: unknown;
}

/** How a call got past (or did not get past) the permission gate. */
export type CallDecision = 'allowed' | 'asked' | 'denied' | 'invalid';

/** Truncation is set on a result whose text was cut at maxResultChars. */
export interface Truncation {
	shownChars: number;
	totalChars: number;
	savedTo: string;
}

/** ToolResult is the outcome of one ToolCall. */
export interface ToolResult {
	callId: string;
	content: McpContent[];
	structuredContent?: unknown;
	isError: boolean;
	decision: CallDecision;
	durationMs: number;
	truncated?: Truncation;
	/** The call's answer was lost and it was not sent again: "outcome unknown, not retried". */
	outcomeUnknown?: boolean;
	/** The call runs as a task on its server ("running as task <taskId>"); freecode/tasks/changed tells the rest. */
	task?: TaskInfo;
}

/** The states of an MCP task: working and input_required are live, the others final. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/**
 * TaskInfo is a task a call started: freecode/tasks, freecode/tasks/changed, ToolResult.task. A task is the
 * frontend's whose call started it, or that adopted it: only that one is told its status message, result and error,
 * and may cancel it; any other is told that it runs.
 */
export interface TaskInfo {
	server: string;
	taskId: string;
	tool: string;
	callId: string;
	status: TaskStatus;
	statusMessage?: string;
	createdAt: string;
	updatedAt: string;
	/** A completed task's result. */
	result?: { content: McpContent[]; structuredContent?: unknown; isError: boolean; truncated?: Truncation };
	/** Why a task failed. */
	error?: string;
	/** The task is ours: one of our calls started it, or we adopted it. */
	mine?: boolean;
}

/** The extension's half of initialize: initializationOptions. */
export interface InitializationOptions {
	configPath?: string;
	/** Only socket frontends send it; the stdio sidecar needs none. */
	token?: string;
	/** Which of the sidecar's questions the frontend answers; it is sent no other. */
	capabilities?: ClientCapabilities;
}
export interface ClientCapabilities {
	elicitation?: boolean;
	sampling?: boolean;
}

/** capabilities.experimental.freecode in initialize's result. */
export interface FreecodeCapabilities {
	protocolVersion: number;
}

// Requests from the frontend.

export interface ServersParams {}
export interface ServersResult {
	servers: ServerStatus[];
}
/** Params of start, stop, restart, login and logout. */
export interface ServerNameParams {
	name: string;
}
export interface ApproveParams {
	name: string;
	approve: boolean;
	/** The approval.entryHash the user was shown: required to approve; a changed entry is refused (-32602, entryHash). */
	entryHash?: string;
}
export interface ToolsParams {
	server?: string;
}
export interface ToolsResult {
	tools: ToolInfo[];
}
export type DefinitionsFormat = 'anthropic' | 'openai';
export const DefinitionsFormats: readonly DefinitionsFormat[] = ['anthropic', 'openai'];
export interface DefinitionsParams {
	format: DefinitionsFormat;
}
export interface DefinitionsResult {
	hash: string;
	tools: unknown[];
}
export interface ExecuteParams {
	calls: ToolCall[];
}
export interface ExecuteResult {
	results: ToolResult[];
}
export interface TasksResult {
	tasks: TaskInfo[];
}
export interface TaskCancelParams {
	server: string;
	taskId: string;
}
export interface TaskAdoptParams {
	server: string;
	taskId: string;
}
export type RuleEffect = 'allow' | 'ask' | 'deny';
export type RuleSource = 'user' | 'project' | 'local' | 'session';
export interface PermissionRule {
	rule: string;
	effect: RuleEffect;
	source: RuleSource;
}
export interface PermissionsResult {
	rules: PermissionRule[];
}
/** Params of freecode/permissions/removeAllow: an "always allow" answer taken back (Undo). */
export interface RemoveAllowParams {
	/** The rule the answer wrote: the tool's id. */
	rule: string;
	/** The answer's scope, which names the file. */
	scope: RuleScope;
}
/** Result of freecode/permissions/removeAllow: the rule file, and whether it held the rule (the session's allow is gone either way). */
export interface RemoveAllowResult {
	path: string;
	removed: boolean;
}
export interface ProjectTrustParams {
	trusted: boolean;
	/** With trusted: the RulesReview.hash the user was shown; the rules are accepted only if they still hash to it. */
	rulesHash?: string;
}
export interface ProjectTrustResult {
	projectTrusted: boolean;
}
export interface SettingsPaths {
	user: string;
	project?: string;
	local?: string;
}
export interface ProjectResult {
	root?: string;
	projectTrusted: boolean;
	configPath: string;
	settingsPaths: SettingsPaths;
	/** The watched files that have problems now, as freecode/config/problems last told them. */
	problems?: ConfigProblemsParams[];
	/** Set while the trusted project's rule files loosen the rules the user accepted: held back until accepted. */
	pendingRules?: RulesReview;
}

/**
 * RulesReview is what a trusted project's rule files loosen beyond the rules
 * the user accepted: allow rules added (ignored meanwhile) and deny and ask
 * rules taken out (still enforced meanwhile). It is freecode/project's
 * pendingRules and the params of freecode/rules/reviewNeeded, where no files
 * means nothing awaits review any more.
 */
export interface RulesReview {
	/** Names the rules accepting records: freecode/project/trust's rulesHash. */
	hash?: string;
	files: RuleFileChange[];
}

/** RuleFileChange is how one rule file loosened. */
export interface RuleFileChange {
	path: string;
	source: 'project' | 'local';
	/** Allow rules added: ignored until accepted. */
	allow?: string[];
	/** Ask rules taken out: still enforced until accepted. */
	ask?: string[];
	/** Deny rules taken out: still enforced until accepted. */
	deny?: string[];
}

// Requests from the sidecar.

/** PermissionRequest asks the user about one call the orchestrator may not run unasked. */
export interface PermissionRequest {
	callId: string;
	tool: string;
	server?: string;
	arguments: unknown;
	readOnly: boolean;
	/** Why it asks: no rule and the tool is not read-only, or the ask rule and its file. */
	reason: string;
	/** Whether "always allow in this project" (scope local) would be honoured. */
	projectTrusted: boolean;
	/** Set when the tool's definition changed since the user accepted it, or it is new. */
	review?: PermissionReview;
	/** Set when an MCP Apps view made the call, not a model: the view's server. */
	app?: { server: string };
}

/** PermissionReview is the change a permission request shows; an answer may accept it. */
export interface PermissionReview {
	kind: ReviewKind;
	/** Names the definition shown: accepting accepts this one only. */
	hash: string;
	/** The change as lines to read: the server's text. */
	diff: string;
	change: DefinitionChange;
}

export type PermissionDecision = 'allowOnce' | 'allowAlways' | 'deny';
/** Where an "always allow" rule is written: the project's local settings or the user's. */
export type RuleScope = 'local' | 'user';

export interface PermissionResponse {
	decision: PermissionDecision;
	scope?: RuleScope;
	/** With an allow decision on a request with a review: accept the definition shown. */
	acceptDefinition?: boolean;
}

export type ElicitationMode = 'form' | 'url';
export type ElicitationAction = 'accept' | 'decline' | 'cancel';
/** freecode/elicitation/request: a server asks the user, during one of our calls, to fill in a form or open a URL. */
export interface ElicitationRequest {
	server: string;
	callId?: string;
	mode: ElicitationMode;
	message: string;
	/** Form mode: a flat JSON Schema object (see elicitationForm.ts). */
	requestedSchema?: unknown;
	/** URL mode: the page to open, once the user agrees. */
	url?: string;
}
export interface ElicitationResponse {
	action: ElicitationAction;
	/** An accepted form's fields by name; the sidecar fills in the schema's defaults for those left out. */
	content?: Record<string, unknown>;
}
/** freecode/sampling/request: a server asks for a completion of the frontend's model. */
export interface SamplingRequest {
	server: string;
	callId?: string;
	/** MCP sampling/createMessage params, as the server sent them (see samplingConsent.ts). */
	params: unknown;
}
/** The answer to freecode/sampling/request: MCP's CreateMessageResult. A refusal is a JSON-RPC error instead. */
export interface SamplingResult {
	role: 'user' | 'assistant';
	content: McpContent;
	model: string;
	stopReason?: string;
}

export interface ResourceInfo {
	server: string;
	uri: string;
	name: string;
	title?: string;
	mimeType?: string;
	description?: string;
}
/** Params of freecode/resources and freecode/prompts: one server's, or every connected server's. */
export interface ListParams {
	server?: string;
}
export interface ResourcesResult {
	resources: ResourceInfo[];
}
export interface ResourceReadParams {
	server: string;
	uri: string;
}
/** One part of a resource: text, or base64 bytes. */
export interface ResourceContents {
	uri: string;
	mimeType?: string;
	text?: string;
	blob?: string;
	/** As the server sent it: an MCP Apps view's _meta.ui (csp, permissions). */
	_meta?: unknown;
}
export interface ReadResourceResult {
	contents: ResourceContents[];
}
export interface PromptArgument {
	name: string;
	title?: string;
	description?: string;
	required?: boolean;
}
export interface PromptInfo {
	server: string;
	name: string;
	title?: string;
	description?: string;
	arguments?: PromptArgument[];
}
export interface PromptsResult {
	prompts: PromptInfo[];
}
export interface PromptGetParams {
	server: string;
	name: string;
	arguments?: Record<string, string>;
}
export interface PromptMessage {
	role: 'user' | 'assistant';
	content: McpContent;
}
export interface GetPromptResult {
	description?: string;
	messages: PromptMessage[];
}

// Notifications.

export interface ToolsChangedParams {
	hashes: { anthropic: string; openai: string };
	server?: string;
	reason: string;
}

/** ServersStatusParams is a ServerStatus: the notification's params are the status itself. */
export type ServersStatusParams = ServerStatus;

export type LogLevel = 'debug' | 'info' | 'warning' | 'error';
export interface ServerLogParams {
	name: string;
	level: LogLevel;
	/** freecode: the server's life as the sidecar saw it (starting, exited, retrying, gave up). */
	source: 'stderr' | 'mcp' | 'freecode';
	message: string;
	/** RFC 3339 time. */
	time: string;
}

export interface ToolProgressParams {
	callId: string;
	progress: number;
	total?: number;
	message?: string;
}

export interface ConfigProblem {
	message: string;
	line?: number;
	column?: number;
	key?: string;
	/** error: the file does not load (the last good one runs); warning: it loads, this part is ignored. */
	severity: 'error' | 'warning';
}
/** freecode/resources/changed and freecode/prompts/changed: read that server's list again. */
export interface ListChangedParams {
	server: string;
	reason: string;
}

export interface ConfigProblemsParams {
	path: string;
	problems: ConfigProblem[];
	/** The file does not load: what it last held runs. */
	lastGood?: boolean;
	/** One line to show as it is: "the config has 2 problems; showing the last good one". */
	summary?: string;
}

// Pinned tool definitions (freecode/tools/review, freecode/tools/reviewNeeded).

/** What a review is about: a changed definition, a new tool; a change may also be a removal. */
export type ReviewKind = 'changed' | 'new' | 'removed';
export type ReviewAction = 'diff' | 'accept' | 'reject';

export interface ReviewParams {
	server: string;
	/** The server's name for the tool; absent means every tool of the server that awaits review. */
	tool?: string;
	action: ReviewAction;
	/** For accept and reject: the ToolReview.hash shown; a newer definition is not touched. */
	hash?: string;
}
export interface ReviewResult {
	reviews: ToolReview[];
}
/** ReviewNeededParams is a server's tools awaiting review, after that list changed; empty when none is left. */
export interface ReviewNeededParams {
	server: string;
	reviews: ToolReview[];
}

/** ToolReview is one tool whose definition awaits the user's review. */
export interface ToolReview {
	server: string;
	/** The server's name for the tool. */
	tool: string;
	id: string;
	kind: ReviewKind;
	/** The user rejected the listed definition: calls of it are denied. */
	rejected?: boolean;
	/** Models are not shown the tool meanwhile. */
	hidden?: boolean;
	hash: string;
	/** The change as lines to read: the server's text. */
	diff: string;
	change: DefinitionChange;
}

/** DefinitionChange is what differs from the accepted definition. */
export interface DefinitionChange {
	tool: string;
	kind: ReviewKind;
	title?: TextChange;
	description?: TextChange;
	inputSchema?: PointerChange[];
	outputSchema?: PointerChange[];
	annotations?: HintChange[];
}
/** TextChange is a changed text; diff has removed words in [-…-], added ones in {+…+}. */
export interface TextChange {
	old: string;
	new: string;
	diff: string;
}
/** PointerChange is one difference of a schema, at an RFC 6901 pointer ("more": how many were left out). */
export interface PointerChange {
	pointer: string;
	op: 'add' | 'remove' | 'replace' | 'more';
	old?: unknown;
	new?: unknown;
}
export interface HintChange {
	hint: 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint' | 'title';
	old: boolean | string;
	new: boolean | string;
}
