// The shape of the MCP Servers tree: a notice per file with problems at the
// top (problemsTree.ts), then the tasks calls started (tasksTree.ts), then the servers, by name; under
// each its tools, then its Resources and Prompts groups; under a group its
// resources or prompts. serversTree.ts and extrasTree.ts each build their
// own nodes and know nothing of each other; this is where they meet.
// Pure: no `vscode` import.

import type { ServersModel } from '../../../../frontend/src/model';
import type { Node, ServerNode } from '../nodes';
import { groupChildren, groupNodes } from './extrasTree';
import { problemNodes } from './problemsTree';
import { taskNodes, tasksNodes } from './tasksTree';
import { serverNode, toolNodes } from './serversTree';

/** serverNodes is the tree's top level, by name. */
export function serverNodes(model: ServersModel): ServerNode[] {
	return model.servers().map((s) => {
		const node = serverNode(s, model.toolsOf(s.name));
		// Resources and prompts make a server expandable too.
		node.expandable ||= model.resourcesOf(s.name).length > 0 || model.promptsOf(s.name).length > 0;
		return node;
	});
}

/** serverChildren is what a server's node holds: its tools, then its Resources and Prompts groups when it has any. */
export function serverChildren(model: ServersModel, server: string): Node[] {
	return [...toolNodes(model, server), ...groupNodes(model, server)];
}

/** children is what the tree shows under node, or at its top without one; now dates the tasks' elapsed times. */
export function children(model: ServersModel, node?: Node, now = Date.now()): Node[] {
	if (!node) return [...problemNodes(model), ...tasksNodes(model), ...serverNodes(model)];
	if (node.kind === 'tasks') return taskNodes(model, now);
	if (node.kind === 'server') return serverChildren(model, node.name);
	if (node.kind === 'group') return groupChildren(model, node.server, node.group);
	return [];
}
