// The MCP Servers tree's nodes for a server's resources and prompts: after
// its tools, a Resources group and a Prompts group (each only when the
// server has some), whose children open a resource or get a prompt; their
// words are their rows' (frontend/src/rows.ts).
// views/tree.ts puts them under their server. Pure: no `vscode` import.

import type { ServersModel } from '../../../../frontend/src/model';
import type { GroupKind, GroupNode, PromptNode, ResourceNode } from '../nodes';
import type { PromptInfo, ResourceInfo } from '../../../../frontend/src/protocol.gen';
import { promptRow, resourceRow } from '../../../../frontend/src/rows';
import { printable } from '../../../../frontend/src/text';

const groupWords: Record<GroupKind, { label: string; icon: string; one: string; many: string }> = {
	resources: { label: 'Resources', icon: 'files', one: 'resource', many: 'resources' },
	prompts: { label: 'Prompts', icon: 'comment-discussion', one: 'prompt', many: 'prompts' },
};

/** groupNode is a server's Resources or Prompts, with how many it holds. */
export function groupNode(server: string, group: GroupKind, count: number): GroupNode {
	const w = groupWords[group];
	return {
		kind: 'group',
		group,
		server,
		label: w.label,
		description: String(count),
		tooltip: `${printable(server)} offers ${count} ${count === 1 ? w.one : w.many}`,
		icon: { id: w.icon },
		contextValue: `group ${group}`,
	};
}

/** resourceNode describes a resource: its row's words, which open it. */
export function resourceNode(r: ResourceInfo): ResourceNode {
	return { kind: 'resource', server: r.server, uri: r.uri, ...resourceRow(r), icon: { id: 'file' }, contextValue: 'resource' };
}

/** promptNode describes a prompt: its row's words, which get it. */
export function promptNode(pr: PromptInfo): PromptNode {
	return { kind: 'prompt', server: pr.server, name: pr.name, ...promptRow(pr), icon: { id: 'comment' }, contextValue: 'prompt' };
}

/** groupNodes is a server's Resources and Prompts groups, each only when the server has some. */
export function groupNodes(model: ServersModel, server: string): GroupNode[] {
	const out: GroupNode[] = [];
	const r = model.resourcesOf(server);
	if (r.length > 0) out.push(groupNode(server, 'resources', r.length));
	const pr = model.promptsOf(server);
	if (pr.length > 0) out.push(groupNode(server, 'prompts', pr.length));
	return out;
}

/** groupChildren is what a server's Resources or Prompts group holds. */
export function groupChildren(model: ServersModel, server: string, group: GroupKind): (ResourceNode | PromptNode)[] {
	return group === 'resources' ? model.resourcesOf(server).map(resourceNode) : model.promptsOf(server).map(promptNode);
}
