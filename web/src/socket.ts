// The frontend protocol over a WebSocket: one JSON-RPC message per text
// frame, as the sidecar's /rpc speaks it, read and written by vscode-jsonrpc
// so that the page's connection is the extension's (Session takes it as it
// is).

import {
	AbstractMessageReader,
	AbstractMessageWriter,
	createMessageConnection,
	type DataCallback,
	type Disposable,
	type Message,
	type MessageConnection,
} from 'vscode-jsonrpc/browser';

class SocketReader extends AbstractMessageReader {
	private callback?: DataCallback;
	private readonly early: Message[] = [];

	constructor(ws: WebSocket) {
		super();
		ws.addEventListener('message', (ev: MessageEvent) => {
			if (typeof ev.data !== 'string') {
				this.fireError(new Error('the sidecar sent a binary frame; the protocol has text frames only'));
				return;
			}
			let msg: Message;
			try {
				msg = JSON.parse(ev.data) as Message;
			} catch (e) {
				this.fireError(new Error(`the sidecar sent a frame that is not JSON: ${(e as Error).message}`));
				return;
			}
			if (this.callback) this.callback(msg);
			else this.early.push(msg);
		});
		ws.addEventListener('close', () => this.fireClose());
	}

	listen(callback: DataCallback): Disposable {
		this.callback = callback;
		for (const m of this.early.splice(0)) callback(m);
		return { dispose: () => (this.callback = undefined) };
	}
}

class SocketWriter extends AbstractMessageWriter {
	private errors = 0;

	constructor(private readonly ws: WebSocket) {
		super();
	}

	async write(msg: Message): Promise<void> {
		try {
			this.ws.send(JSON.stringify(msg));
		} catch (e) {
			this.fireError(e as Error, msg, ++this.errors);
			throw e;
		}
	}

	end(): void {
		this.ws.close();
	}
}

/** rpcURL is the sidecar's WebSocket, on the page's own origin: the cookie that signed the browser in goes with it. */
export function rpcURL(loc: { protocol: string; host: string }): string {
	return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/rpc`;
}

/** openSocket connects, resolving once open; it rejects when the sidecar refuses or is not there. */
export function openSocket(url: string): Promise<WebSocket> {
	return new Promise((resolve, reject) => {
		const ws = new WebSocket(url);
		const fail = () => reject(new Error('closed'));
		ws.addEventListener('error', fail, { once: true });
		ws.addEventListener('close', fail, { once: true });
		ws.addEventListener(
			'open',
			() => {
				ws.removeEventListener('error', fail);
				ws.removeEventListener('close', fail);
				resolve(ws);
			},
			{ once: true },
		);
	});
}

/** connection makes a JSON-RPC connection of an open socket. */
export function connection(ws: WebSocket): MessageConnection {
	return createMessageConnection(new SocketReader(ws), new SocketWriter(ws));
}
