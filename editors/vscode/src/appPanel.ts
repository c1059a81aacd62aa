// MCP Apps views in VS Code: the result of a tool that names a ui://
// view opens that view in a webview panel, one panel per view, reused by
// the next result. The page (appPage.ts) holds the view in a sandboxed
// frame under its policy (appCsp.ts); the bridge (appBridge.ts) answers
// it. Its calls go to the sidecar as freecode/tools/execute marked with
// the view's server (app), so they meet the same validation, permission
// rules and prompts as any call, and it reads resources of that server
// alone. The webview gets no command URIs, no forms and no local
// resources.

import * as vscode from 'vscode';
import { appPolicy, viewCaption, withPolicy } from './appCsp';
import { AppBridge, callToolResult, type CallToolResult } from './appBridge';
import { appPage, viewOf, type HostMessage, type PageMessage } from './appPage';
import { pageTheme, type PageTheme } from './appTheme';
import type { ServersModel } from '../../../frontend/src/model';
import type { ToolInfo, ToolResult } from '../../../frontend/src/protocol.gen';
import type { Session } from '../../../frontend/src/session';
import { printable } from '../../../frontend/src/text';

interface Shown {
	panel: vscode.WebviewPanel;
	bridge: AppBridge | undefined;
	cancel: vscode.CancellationTokenSource;
	subs: vscode.Disposable[];
	/** The editor's theme as the page last reported it. */
	theme?: PageTheme;
}

/** How long a view replaced by the next result has to answer ui/resource-teardown. */
const teardownMs = 1000;

export class AppViews implements vscode.Disposable {
	private readonly shown = new Map<string, Shown>();
	private seq = 0;

	constructor(
		private readonly session: () => Session | undefined,
		private readonly model: ServersModel,
		private readonly log: vscode.LogOutputChannel,
		private readonly version: string,
	) {}

	/**
	 * show renders the view of tool's result, if the tool names one: read
	 * through the sidecar, in the panel of that view (made or reused).
	 * A view that cannot be read or is not one to render is said, and the
	 * result stands as the text it is.
	 */
	async show(tool: ToolInfo, args: unknown, r: ToolResult, column: vscode.ViewColumn): Promise<void> {
		const uri = tool.ui?.resourceUri;
		const server = tool.server;
		const s = this.session();
		if (!uri || !server || !s || !uri.startsWith('ui://')) return;
		let view;
		try {
			view = viewOf(await s.readResource(server, uri), uri);
		} catch (e) {
			view = { error: e instanceof Error ? e.message : String(e) };
		}
		if ('error' in view) {
			void vscode.window.showWarningMessage(`The view of ${printable(tool.id)} is not shown: ${printable(view.error)}`);
			return;
		}
		const { policy, approved, refused } = appPolicy(view.csp);
		this.log.info(`MCP App ${uri} of ${server}: policy ${policy}`);
		for (const why of refused) this.log.warn(`MCP App ${uri} of ${server}: _meta.ui.csp ${why}; left out`);
		for (const why of view.dropped ?? []) this.log.warn(`MCP App ${uri} of ${server}: _meta.ui.csp ${why}; left out by FreeCode`);

		const key = `${server}\n${uri}`;
		let shown = this.shown.get(key);
		if (shown) {
			const old = shown.bridge;
			shown.bridge = undefined;
			let timer: ReturnType<typeof setTimeout> | undefined;
			await Promise.race([old?.teardown('the next result replaces it'), new Promise((res) => (timer = setTimeout(res, teardownMs)))]);
			clearTimeout(timer);
			old?.close();
			shown.panel.reveal(undefined, true);
		} else {
			const panel = vscode.window.createWebviewPanel(
				'freecode.appView',
				`${printable(tool.title ?? tool.name)} — view`,
				{ viewColumn: column, preserveFocus: true },
				{ enableScripts: true, enableCommandUris: false, enableForms: false, localResourceRoots: [], retainContextWhenHidden: true },
			);
			const created: Shown = { panel, bridge: undefined, cancel: new vscode.CancellationTokenSource(), subs: [] };
			created.subs.push(
				panel.webview.onDidReceiveMessage((m: PageMessage) => {
					if (!m || typeof m !== 'object') return;
					if ('app' in m) void created.bridge?.receive(m.app);
					else if ('theme' in m) {
						const t = pageTheme(m.theme);
						if (!t) return;
						created.theme = t;
						created.bridge?.setContext(contextOf(t));
					}
				}),
				panel.onDidDispose(() => this.drop(key, created)),
			);
			this.shown.set(key, created);
			shown = created;
		}
		const target = shown;
		const post = (m: HostMessage) => void target.panel.webview.postMessage(m);
		const bridge = new AppBridge(
			{
				callTool: (name, a) => this.callTool(server, name, a, target.cancel.token),
				readResource: (u) => s.readResource(server, u),
				resize: (size) => post({ size }),
				log: (level, text) => this.log.info(`MCP App ${uri} of ${server} [${level}]: ${text}`),
				openLink: (url) => Promise.resolve(vscode.env.openExternal(vscode.Uri.parse(url, true))),
			},
			(m) => {
				// A bridge replaced by the next result says nothing more.
				if (target.bridge === bridge) post({ toApp: m });
			},
			{
				hostInfo: { name: 'FreeCode for VS Code', version: this.version },
				hostCapabilities: { serverTools: {}, serverResources: {}, logging: {}, openLinks: {}, sandbox: { permissions: {}, csp: approved } },
				hostContext: {
					toolInfo: { tool: { name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema } },
					theme: themeOf(vscode.window.activeColorTheme.kind),
					displayMode: 'inline',
					availableDisplayModes: ['inline'],
					locale: vscode.env.language,
					timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
					userAgent: `FreeCode/${this.version} (${vscode.env.appName})`,
					platform: vscode.env.uiKind === vscode.UIKind.Web ? 'web' : 'desktop',
					...(target.theme ? contextOf(target.theme) : {}),
				},
				toolInput: args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {},
			},
		);
		target.bridge = bridge;
		target.panel.webview.html = appPage({
			html: withPolicy(view.html, policy),
			policy,
			caption: viewCaption(uri, server, approved, view.dropped),
		});
		bridge.toolResult(callToolResult(r));
	}

	/** callTool runs a view's call: the tool of the view's server by that server's name for it. */
	private async callTool(server: string, name: string, args: Record<string, unknown>, token: vscode.CancellationToken): Promise<CallToolResult> {
		const s = this.session();
		if (!s) throw new Error("FreeCode's sidecar is not running");
		const tool = this.model.toolsOf(server).find((t) => t.name === name);
		if (!tool) return { content: [{ type: 'text', text: `server ${server} has no tool ${name}` }], isError: true };
		const callId = `vscode-app-${Date.now().toString(36)}-${++this.seq}`;
		const res = await s.execute([{ callId, tool: tool.id, arguments: args, app: { server } }], token);
		const r = res.results.find((x) => x.callId === callId) ?? res.results[0];
		if (!r) throw new Error('the sidecar returned no result');
		return callToolResult(r);
	}

	private drop(key: string, shown: Shown): void {
		if (this.shown.get(key) === shown) this.shown.delete(key);
		shown.bridge?.close();
		shown.cancel.cancel();
		shown.cancel.dispose();
		shown.subs.forEach((d) => d.dispose());
	}

	dispose(): void {
		for (const s of [...this.shown.values()]) s.panel.dispose();
	}
}

/** contextOf is the part of the host context a page's theme sets. */
function contextOf(t: PageTheme): Record<string, unknown> {
	return { theme: t.theme, styles: { variables: t.variables } };
}

function themeOf(kind: vscode.ColorThemeKind): 'light' | 'dark' {
	return kind === vscode.ColorThemeKind.Light || kind === vscode.ColorThemeKind.HighContrastLight ? 'light' : 'dark';
}
