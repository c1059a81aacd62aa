// Every command the extension contributes, by id. Each lives in its own file
// as a factory taking the shared FreeCode parts (vscode-go's shape).

import * as vscode from 'vscode';
import type { FreeCode } from '../context';
import { addServer } from './addServer';
import { adoptTask } from './adoptTask';
import { approveServer } from './approveServer';
import { browseRegistry } from './browseRegistry';
import { cancelTask } from './cancelTask';
import { disableServer, enableServer, removeServer, showServerConfiguration } from './configServer';
import { getPrompt } from './getPrompt';
import { importServers } from './importServers';
import { openConfig } from './openConfig';
import { openResource } from './openResource';
import { restartServer } from './restartServer';
import { restartSidecar } from './restartSidecar';
import { revokeServer } from './revokeServer';
import { runTool } from './runTool';
import { runToolWithArguments } from './runToolWithArguments';
import { setSecret } from './setSecret';
import { showConfigProblems } from './showConfigProblems';
import { showServerLog } from './showServerLog';
import { showSidecarLog } from './showSidecarLog';
import { showTaskResult } from './showTaskResult';
import { showToolDefinitions } from './showToolDefinitions';
import { signIn } from './signIn';
import { signOut } from './signOut';
import { startServer } from './startServer';
import { stopServer } from './stopServer';
import { acceptToolDefinition, rejectToolDefinition, showToolDefinitionDiff } from './toolDefinition';
import { trustProject } from './trustProject';
import { untrustProject } from './untrustProject';
import type { CommandFactory } from './util';

/** commands maps each command id of package.json to its factory. */
export const commands: Record<string, CommandFactory> = {
	'freecode.addServer': addServer,
	'freecode.openConfig': openConfig,
	'freecode.importServers': importServers,
	'freecode.browseRegistry': browseRegistry,
	'freecode.showToolDefinitions': showToolDefinitions,
	'freecode.restartSidecar': restartSidecar,
	'freecode.showSidecarLog': showSidecarLog,
	'freecode.runTool': runTool,
	'freecode.runToolWithArguments': runToolWithArguments,
	'freecode.trustProject': trustProject,
	'freecode.untrustProject': untrustProject,
	'freecode.server.start': startServer,
	'freecode.server.stop': stopServer,
	'freecode.server.restart': restartServer,
	'freecode.server.showLog': showServerLog,
	'freecode.server.showConfiguration': showServerConfiguration,
	'freecode.server.enable': enableServer,
	'freecode.server.disable': disableServer,
	'freecode.server.remove': removeServer,
	'freecode.showConfigProblems': showConfigProblems,
	'freecode.server.approve': approveServer,
	'freecode.server.revoke': revokeServer,
	'freecode.server.signIn': signIn,
	'freecode.server.signOut': signOut,
	'freecode.server.setSecret': setSecret,
	'freecode.resource.open': openResource,
	'freecode.prompt.get': getPrompt,
	'freecode.tool.showDefinitionDiff': showToolDefinitionDiff,
	'freecode.tool.acceptDefinition': acceptToolDefinition,
	'freecode.tool.rejectDefinition': rejectToolDefinition,
	'freecode.task.cancel': cancelTask,
	'freecode.task.adopt': adoptTask,
	'freecode.task.showResult': showTaskResult,
};

/** registerCommands registers every command for the extension's lifetime. */
export function registerCommands(fc: FreeCode): void {
	for (const [id, factory] of Object.entries(commands)) {
		fc.ext.subscriptions.push(vscode.commands.registerCommand(id, factory(fc)));
	}
}
