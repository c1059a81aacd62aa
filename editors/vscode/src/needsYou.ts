// Which servers wait for the user: a project's server awaiting approval, a
// remote server that needs a sign-in. Its row says so, but a row in a view
// the user may not have open is easily missed, and the server does nothing
// until they act: each is told once when it comes to wait, and again only
// after it stopped waiting and came back to it. Pure: no `vscode` import.

import type { ServersModel } from '../../../frontend/src/model';
import type { ServerState } from '../../../frontend/src/protocol.gen';

/** The states in which a server waits for the user. */
export type Waiting = Extract<ServerState, 'awaitingApproval' | 'needsAuth'>;

export interface WaitingServer {
	name: string;
	state: Waiting;
}

function waiting(state: ServerState): state is Waiting {
	return state === 'awaitingApproval' || state === 'needsAuth';
}

export class NeedsYou {
	/** Servers told about, with the state they were told in. */
	private readonly told = new Map<string, Waiting>();

	/** update reads the model after a change and returns the servers that came to wait for the user, each once. */
	update(model: ServersModel): WaitingServer[] {
		if (!model.loaded) {
			this.told.clear();
			return [];
		}
		const out: WaitingServer[] = [];
		const seen = new Set<string>();
		for (const s of model.servers()) {
			seen.add(s.name);
			if (!waiting(s.state)) {
				this.told.delete(s.name);
				continue;
			}
			if (this.told.get(s.name) === s.state) continue;
			this.told.set(s.name, s.state);
			out.push({ name: s.name, state: s.state });
		}
		for (const name of [...this.told.keys()]) if (!seen.has(name)) this.told.delete(name);
		return out;
	}
}

/** needsYouMessage is the notification for w, and its one button. */
export function needsYouMessage(w: WaitingServer): { text: string; button: string; command: string } {
	return w.state === 'awaitingApproval'
		? { text: `This project ships the MCP server "${w.name}": it runs once you approve it.`, button: 'Review…', command: 'freecode.server.approve' }
		: { text: `The MCP server "${w.name}" needs you to sign in before it connects.`, button: 'Sign In', command: 'freecode.server.signIn' };
}
