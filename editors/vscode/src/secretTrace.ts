// The value of a secret the user types (Set Secret…, freecode/secrets/set)
// goes to the sidecar and nowhere else of the extension's: in particular not
// to the "FreeCode Trace" channel, where the LanguageClient writes every
// message with its params when freecode.trace.server is verbose.
//
// The client has no per-message switch. Turning its trace off around the
// request (setTrace) would need the level to turn it back to, which the
// client keeps private: it is the setting and the channel's log level
// together, by rules of the library's own. So the channels the client
// writes to, which are ours, go to it through a mask: while a secrets/set
// request is in flight, its value, as it is and as JSON writes it (text and
// JSON trace formats both print the params as JSON), is "***" in whatever
// the client writes. The middleware runs on the client's own send, so the
// value is hidden before the message is traced and until its answer came.
// The sidecar's --trace masks it the same way on its side. Pure: no
// `vscode` import, so the headless test runs it on vscode-jsonrpc's tracer.

import { MethodSecretsSet } from '../../../frontend/src/protocol.gen';

/** What the channel's masked methods are: those that write text. */
const writes = new Set(['trace', 'debug', 'info', 'warn', 'error', 'append', 'appendLine', 'replace']);

/** SecretMask hides the values of the secrets being sent from the channels it wraps. */
export class SecretMask {
	/** The values in flight, each with the number of its requests. */
	private readonly hidden = new Map<string, number>();

	/**
	 * sendRequest is the LanguageClient's middleware of that name: a
	 * freecode/secrets/set request's value is hidden from before it is sent
	 * (and traced) until its answer came; any other request goes as it is.
	 */
	readonly sendRequest = <T extends string | { method: string }, P, K, R>(
		type: T,
		param: P | undefined,
		token: K | undefined,
		next: (type: T, param?: P, token?: K) => Promise<R>,
	): Promise<R> => {
		const method = typeof type === 'string' ? type : type.method;
		const value = method === MethodSecretsSet ? secretValue(param) : undefined;
		if (value === undefined) return next(type, param, token);
		this.hidden.set(value, (this.hidden.get(value) ?? 0) + 1);
		const done = () => {
			const n = (this.hidden.get(value) ?? 1) - 1;
			if (n > 0) this.hidden.set(value, n);
			else this.hidden.delete(value);
		};
		let sent: Promise<R>;
		try {
			sent = next(type, param, token);
		} catch (e) {
			done();
			throw e;
		}
		return sent.finally(done);
	};

	/** mask is text with each value in flight as "***". */
	mask(text: string): string {
		for (const v of this.hidden.keys()) {
			// The longer form first: the JSON form of a value with a quote
			// or a backslash holds more than the value.
			const forms = [...new Set([JSON.stringify(v).slice(1, -1), v])].sort((a, b) => b.length - a.length);
			for (const f of forms) text = text.split(f).join('***');
		}
		return text;
	}

	/**
	 * channel is c with every string given to a method that writes
	 * (trace, info, appendLine…) masked; everything else, the log level
	 * among it, is c's own.
	 */
	channel<C extends object>(c: C): C {
		return new Proxy(c, {
			get: (target, prop) => {
				const v: unknown = Reflect.get(target, prop, target);
				if (typeof v !== 'function') return v;
				if (typeof prop === 'string' && writes.has(prop)) {
					return (...args: unknown[]) => v.apply(target, this.hidden.size === 0 ? args : args.map((a) => (typeof a === 'string' ? this.mask(a) : a)));
				}
				return v.bind(target);
			},
		});
	}
}

/** secretValue is the value of a freecode/secrets/set request's params, if it has a non-empty one. */
function secretValue(param: unknown): string | undefined {
	if (typeof param !== 'object' || param === null) return undefined;
	const v = (param as { value?: unknown }).value;
	return typeof v === 'string' && v !== '' ? v : undefined;
}
