// The extension's entry points: activate builds the parts and starts the
// sidecar, deactivate stops it. Everything else lives in its own module.

import * as vscode from 'vscode';
import { Sidecar } from './client';
import { registerCommands } from './commands';
import { machine, readSettings } from './config';
import { ConfigProblems } from './configProblems';
import type { FreeCode } from './context';
import { askElicitation } from './elicitationPrompt';
import { ServersModel, toolKind } from './model';
import { askPermission } from './permissionPrompt';
import { askSampling } from './samplingPrompt';
import { ReadOnlyDocs } from './readOnlyDocs';
import { ReviewNotices } from './reviewNotices';
import { ServerLogs } from './serverLogs';
import { StatusItem } from './status';
import { ToolRuns } from './toolRuns';
import { ServersView } from './views/serversView';
import { watchSidecar } from './watch';

let sidecar: Sidecar | undefined;

export async function activate(ext: vscode.ExtensionContext): Promise<void> {
	const model = new ServersModel();
	const logs = new ServerLogs();
	const problems = new ConfigProblems();
	const toolRuns = new ToolRuns();
	const docs = new ReadOnlyDocs();
	const settings = () => readSettings(ext);
	const reviews = new ReviewNotices(docs, () => sidecar?.session);
	const sc = new Sidecar(
		model,
		{
			askPermission: (req, token) => {
				const tool = model.tool(req.tool);
				return askPermission(req, settings().argumentChars, token, docs, tool && toolKind(tool) === 'destructive');
			},
			serverLog: (l) => logs.append(l),
			configProblems: (p) => problems.set(p),
			toolProgress: (p) => toolRuns.onProgress(p),
			askElicitation: (req, token) => askElicitation(req, token, (m) => sc.output.warn(m)),
			askSampling: (req, token) => askSampling(req, token, docs, Math.min(settings().argumentChars, 500)),
			reviewNeeded: (r) => reviews.notify(r),
			warn: (m) => sc.output.warn(m),
		},
		settings,
	);
	sidecar = sc;
	const fc: FreeCode = { ext, model, sidecar: sc, logs, toolRuns, docs, settings, machine: () => machine(ext) };
	ext.subscriptions.push(sc, logs, problems, toolRuns, docs, new ServersView(model, sc), new StatusItem(model, sc));
	registerCommands(fc);
	watchSidecar(fc);
	await sc.start();
}

export async function deactivate(): Promise<void> {
	await sidecar?.stop();
	sidecar = undefined;
}
