// The extension's entry points: activate builds the parts and starts the
// sidecar, deactivate stops it. Everything else lives in its own module.

import * as vscode from 'vscode';
import { AppViews } from './appPanel';
import { Sidecar } from './client';
import { registerCommands } from './commands';
import { machine, readSettings } from './config';
import { ConfigProblems } from './configProblems';
import type { FreeCode } from './context';
import { askElicitation } from './elicitationPrompt';
import { ServersModel, toolKind } from '../../../frontend/src/model';
import { allowStep } from './allowNotice';
import { openConfigDocument } from './commands/openConfig';
import { askPermission, tellAllowed } from './permissionPrompt';
import { askSampling } from './samplingPrompt';
import type { PermissionResponse } from '../../../frontend/src/protocol.gen';
import type { Session } from '../../../frontend/src/session';
import { ReadOnlyDocs } from './readOnlyDocs';
import { ReviewNotices } from './reviewNotices';
import { RulesNotices } from './rulesNotices';
import { NeedsYou, needsYouMessage } from './needsYou';
import { NewServers, stillFailing, SET_SECRET, failedNotice } from './newServers';
import { ServerLogs } from './serverLogs';
import { StatusItem } from './status';
import { TaskNotices } from './taskNotices';
import { TaskResultDoc } from './taskResultDoc';
import { ToolRuns } from './toolRuns';
import { registerWithVSCodeChat } from './vscodeChat';
import { ServersView } from './views/serversView';
import { watchSidecar } from './watch';

let sidecar: Sidecar | undefined;

export async function activate(ext: vscode.ExtensionContext): Promise<void> {
	const model = new ServersModel();
	const logs = new ServerLogs();
	const problems = new ConfigProblems();
	const toolRuns = new ToolRuns(ext.workspaceState);
	const docs = new ReadOnlyDocs();
	const settings = () => readSettings(ext);
	const reviews = new ReviewNotices(docs, () => sidecar?.session);
	const rules = new RulesNotices(docs, () => sidecar?.session);
	const sc: Sidecar = new Sidecar(
		model,
		{
			askPermission: async (req, token): Promise<PermissionResponse> => {
				const tool = model.tool(req.tool);
				const s: Session | undefined = sc.session;
				// Whether there is a project to allow in: an untrusted one's
				// "in this project" trusts it first.
				const root: string | undefined = req.projectTrusted ? undefined : await s?.project().then((p) => p.root, () => undefined);
				let trusted = false;
				const project = {
					exists: req.projectTrusted || root !== undefined,
					trust: async () => {
						if (!s) return;
						const r = await s.trust(true);
						trusted = r.projectTrusted;
						await vscode.commands.executeCommand('setContext', 'freecode.projectTrusted', r.projectTrusted);
					},
				};
				const answer = await askPermission(req, settings().argumentChars, token, docs, tool && toolKind(tool) === 'destructive', project);
				// What an "always allow" wrote is said, with Undo, once the answer went.
				const step = allowStep(req.tool, answer, trusted);
				if (step && s) void tellAllowed(s, step, (path) => void openConfigDocument(vscode.Uri.file(path)));
				return answer;
			},
			serverLog: (l) => logs.append(l),
			configProblems: (p) => problems.set(p),
			toolProgress: (p) => toolRuns.onProgress(p),
			askElicitation: (req, token) => askElicitation(req, token, (m) => sc.output.warn(m)),
			askSampling: (req, token) => askSampling(req, token, docs, Math.min(settings().argumentChars, 500)),
			reviewNeeded: (r) => reviews.notify(r),
			rulesReview: (r) => rules.notify(r),
			warn: (m) => sc.output.warn(m),
		},
		settings,
	);
	sidecar = sc;
	const apps = new AppViews(() => sc.session, model, sc.output, String(ext.extension.packageJSON.version ?? ''));
	const taskDoc = new TaskResultDoc(model, docs);
	const fc: FreeCode = { ext, model, sidecar: sc, logs, toolRuns, docs, taskDoc, apps, settings, machine: () => machine(ext) };
	ext.subscriptions.push(sc, logs, problems, toolRuns, docs, taskDoc, apps, new ServersView(model, sc), new StatusItem(model, sc));
	registerCommands(fc);
	ext.subscriptions.push(new TaskNotices(model));
	const added = new NewServers();
	// Servers an import adds fail within a moment of each other: gathered
	// for that moment into one notification (failedNotice).
	let failed: string[] = [];
	let failedTimer: ReturnType<typeof setTimeout> | undefined;
	const tellFailed = (): void => {
		failedTimer = undefined;
		const names = stillFailing(model, failed);
		failed = [];
		if (names.length === 0) return;
		const n = failedNotice(model, names);
		void vscode.window.showErrorMessage(n.text, ...n.buttons).then((pick) => {
			if (pick === 'Show Log' && n.server) fc.logs.show(n.server, model.server(n.server));
			if (pick === 'Show Configuration' && n.server) void vscode.commands.executeCommand('freecode.server.showConfiguration', { kind: 'server', name: n.server });
			if (pick === 'Show Servers') void vscode.commands.executeCommand('freecode.servers.focus');
			// On several servers, the command's picker offers those that miss one.
			if (pick === SET_SECRET) void vscode.commands.executeCommand('freecode.server.setSecret', n.server ? { kind: 'server', name: n.server } : undefined);
		});
	};
	const offAdded = model.onDidChange(() => {
		const now = added.update(model);
		if (now.length === 0) return;
		failed.push(...now);
		failedTimer ??= setTimeout(tellFailed, 1500);
	});
	ext.subscriptions.push({ dispose: offAdded }, { dispose: () => failedTimer && clearTimeout(failedTimer) });
	const waiting = new NeedsYou();
	const offWaiting = model.onDidChange(() => {
		for (const w of waiting.update(model)) {
			const m = needsYouMessage(w);
			void vscode.window.showInformationMessage(m.text, m.button).then((pick) => {
				if (pick === m.button) void vscode.commands.executeCommand(m.command, { kind: 'server', name: w.name });
			});
		}
	});
	ext.subscriptions.push({ dispose: offWaiting });
	watchSidecar(fc);
	registerWithVSCodeChat(ext, settings, sc, model);
	await sc.start();
}

export async function deactivate(): Promise<void> {
	await sidecar?.stop();
	sidecar = undefined;
}
