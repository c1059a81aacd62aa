// FreeCode is what the extension's parts share, built once in activate and
// handed to every command (vscode-go's GoExtensionContext, smaller).

import type * as vscode from 'vscode';
import type { AppViews } from './appPanel';
import type { Sidecar } from './client';
import type { ServersModel } from '../../../frontend/src/model';
import type { ServerLogs } from './serverLogs';
import type { Machine, Settings } from './settings';
import type { ReadOnlyDocs } from './readOnlyDocs';
import type { TaskResultDoc } from './taskResultDoc';
import type { ToolRuns } from './toolRuns';

export interface FreeCode {
	readonly ext: vscode.ExtensionContext;
	readonly model: ServersModel;
	readonly sidecar: Sidecar;
	readonly logs: ServerLogs;
	readonly toolRuns: ToolRuns;
	readonly docs: ReadOnlyDocs;
	/** The result document's task, followed to its end. */
	readonly taskDoc: TaskResultDoc;
	/** The MCP Apps views of tool results. */
	readonly apps: AppViews;
	/** settings reads the freecode.* settings now. */
	settings(): Settings;
	machine(): Machine;
}
