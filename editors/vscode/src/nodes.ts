// The nodes of the MCP Servers tree: what views/serversTree.ts (servers and
// their tools) and views/extrasTree.ts (their resources and prompts) build,
// serversView.ts turns into TreeItems, and the commands receive when run
// from a node's menu. Types only, so both trees and the commands share them
// without importing each other. Pure: no `vscode` import.

/** Icon names a codicon; color is a theme color id. */
export interface Icon {
	id: string;
	color?: string;
}

/** ServerNode is one server as the view shows it. */
export interface ServerNode {
	kind: 'server';
	name: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	/** Words the package.json menus match on: "server state:<state> scope:<scope> [approved]". */
	contextValue: string;
	/** Whether the node has children (tools, resources or prompts). */
	expandable: boolean;
}

/** ToolNode is one tool under its server. */
export interface ToolNode {
	kind: 'tool';
	id: string;
	server: string;
	/** The server's name for the tool, as it sent it (label is the printable form). */
	name: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

export type GroupKind = 'resources' | 'prompts';

/** GroupNode is the Resources or the Prompts of a server. */
export interface GroupNode {
	kind: 'group';
	group: GroupKind;
	server: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

/** ResourceNode is one resource of a server. */
export interface ResourceNode {
	kind: 'resource';
	server: string;
	uri: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

/** PromptNode is one prompt of a server. */
export interface PromptNode {
	kind: 'prompt';
	server: string;
	name: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

/** NoticeNode is a line above the servers about a file they come from: its problems. */
export interface NoticeNode {
	kind: 'notice';
	/** The file the notice is about. */
	path: string;
	/** Its first problem's 1-based line and column, where Show Problems goes. */
	line: number;
	column: number;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

/** TasksNode is the Tasks group above the servers: the tasks calls started. */
export interface TasksNode {
	kind: 'tasks';
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	contextValue: string;
}

/** TaskNode is one task under Tasks. */
export interface TaskNode {
	kind: 'task';
	server: string;
	taskId: string;
	label: string;
	description: string;
	tooltip: string;
	icon: Icon;
	/** What it offers (tasksTree.ts TaskRowContext): "task live", "task result", "task" or "task other". */
	contextValue: string;
}

export type Node = ServerNode | ToolNode | GroupNode | ResourceNode | PromptNode | NoticeNode | TasksNode | TaskNode;
