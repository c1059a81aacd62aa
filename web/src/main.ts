// The FreeCode MCP page: a frontend of the sidecar like the extension, over
// the sidecar's own WebSocket (/rpc on the page's origin; the browser was
// signed in by the one-time link `freecode web` opened, so the page never
// holds a token). It runs the Session and ServersModel the extension runs
// too (frontend/src) on that connection and renders them (view.ts); the
// questions the sidecar asks this tab are dialogs (dialogs.ts).

import { approvalPrompt, APPROVE } from '../../frontend/src/approvalPrompt';
import { promptDoc, resourceDoc } from '../../frontend/src/extrasText';
import { ServersModel } from '../../frontend/src/model';
import type { PermissionResponse, ServerLog, ServerStatus, ToolInfo } from '../../frontend/src/protocol.gen';
import { resultBody, resultSummary } from '../../frontend/src/resultText';
import { reviewDocument } from '../../frontend/src/reviewText';
import { takesNoArguments } from '../../frontend/src/schemaPrefill';
import { installedWords } from '../../frontend/src/registryWords';
import { missingSecrets, secretsSetWords, setSecrets } from '../../frontend/src/secrets';
import type { ServerAction } from '../../frontend/src/serverActions';
import { Session } from '../../frontend/src/session';
import { oneLine, printable } from '../../frontend/src/text';
import { argumentsForm, askPermission, askSecret, showDocument } from './dialogs';
import { installDialog } from './registryDialog';
import { button, h } from './dom';
import { Logs } from './logs';
import { connection, openSocket, rpcURL } from './socket';
import { promptSchema } from './toolForm';
import { View, type Sidecar } from './view';

const model = new ServersModel();
const logs = new Logs();
const notices = document.getElementById('notices')!;
const runs = document.getElementById('runs')!;
let sidecar: Sidecar = 'starting';
let hasProject = false;
let session: Session | undefined;
let calls = 0;

/** notice shows a line above the servers until it is closed; level error stays, others go after a while. */
function notice(text: string | Node, level: 'info' | 'warning' | 'error' = 'info'): HTMLElement {
	const n = h('div', { class: `notice ${level}`, role: level === 'error' ? 'alert' : 'status' }, text);
	n.append(button('×', () => n.remove(), { class: 'close', 'aria-label': 'Close' }));
	notices.append(n);
	while (notices.childElementCount > 6) notices.firstElementChild?.remove();
	return n;
}

function failed(what: string, e: unknown): void {
	notice(`${what} failed: ${printable((e as Error).message ?? String(e))}`, 'error');
}

const view = new View(document.getElementById('servers')!, model, logs, {
	server: (a, s) => void serverAction(a, s),
	run: (t) => void run(t),
	review: (t) => void review(t),
	readResource: (server, uri) =>
		void session?.readResource(server, uri).then(
			(r) => {
				const d = resourceDoc(server, uri, r);
				showDocument(d.name, d.content);
			},
			(e) => failed(`Reading ${uri}`, e),
		),
	getPrompt: (server, name) => void getPrompt(server, name),
});

// Install from the MCP Registry: the dialog asks the sidecar, which
// writes the entry; the server's row comes as the config watcher applies it.
const installButton = button('Install from registry…', () => void installFromRegistry(), { id: 'install-registry', disabled: true });
document.getElementById('toolbar')!.append(installButton);

async function installFromRegistry(): Promise<void> {
	const sess = session;
	if (!sess) return;
	const r = await installDialog({
		search: (query, limit) => sess.registrySearch(query, limit),
		values: (name, version) => sess.registryValues(name, version),
		install: (params) => sess.registryInstall(params),
	});
	if (r) notice(installedWords(r));
}

let pending = false;
function render(): void {
	if (pending) return;
	pending = true;
	setTimeout(() => {
		pending = false;
		view.render(sidecar);
	}, 0);
}
model.onDidChange(render);

async function serverAction(a: ServerAction, s: ServerStatus): Promise<void> {
	const sess = session;
	if (!sess) return;
	try {
		switch (a) {
			case 'start':
				return void (await sess.start(s.name));
			case 'stop':
				return void (await sess.stop(s.name));
			case 'restart':
				return void (await sess.restart(s.name));
			case 'signIn': {
				const st = await sess.login(s.name);
				if (st.state !== 'connected') notice(`Signing in to ${oneLine(s.name, 80)} did not connect it: ${printable(st.lastError ?? st.state)}`, 'warning');
				return;
			}
			case 'signOut':
				return void (await sess.logout(s.name));
			case 'revoke':
				return void (await sess.approve(s.name, false));
			case 'setSecret': {
				const r = await setSecrets(sess, s.name, missingSecrets(s), (name, prompt) => askSecret(`Set the secret ${printable(name)}`, prompt));
				if (!r) return;
				notice(secretsSetWords(r));
				// Their statuses came before the answer: one that failed again says why.
				for (const started of r.started) {
					const now = model.server(started);
					if (now?.state === 'failed') notice(`${oneLine(started, 80)} failed: ${printable(now.lastError ?? 'no reason given')}`, 'warning');
				}
				return;
			}
			case 'approve': {
				const p = approvalPrompt(s);
				if ('error' in p) return void notice(p.error, 'warning');
				showDocument(p.message, p.detail, [{ label: APPROVE, run: () => void sess.approve(s.name, true, p.entryHash).catch((e) => failed('Approving', e)) }]);
				return;
			}
			default:
				return;
		}
	} catch (e) {
		failed(`${a} ${oneLine(s.name, 80)}`, e);
	}
}

async function run(t: ToolInfo): Promise<void> {
	const sess = session;
	if (!sess) return;
	const args = takesNoArguments(t.inputSchema) ? {} : await argumentsForm(`Run ${printable(t.id)}`, t.inputSchema, 'Run');
	if (!args) return;
	const callId = `web-${Date.now().toString(36)}-${++calls}`;
	const entry = h('li', { class: 'run running', 'data-call': callId, 'data-tool': t.id }, h('strong', {}, printable(t.id)), ' running…');
	runs.prepend(entry);
	try {
		const res = await sess.execute([{ callId, tool: t.id, arguments: args }]);
		const r = res.results[0];
		entry.className = `run ${r.isError ? 'error' : 'ok'}`;
		entry.dataset.decision = r.decision;
		// The summary is the entry's title: the document's own head line
		// and its ===== underline are for an editor tab, not here.
		entry.replaceChildren(h('strong', {}, resultSummary(t.id, r)), h('pre', {}, resultBody(r)));
	} catch (e) {
		entry.className = 'run error';
		entry.replaceChildren(h('strong', {}, `${printable(t.id)}: ${printable((e as Error).message)}`));
	}
}

async function getPrompt(server: string, name: string): Promise<void> {
	const sess = session;
	if (!sess) return;
	const info = model.promptsOf(server).find((p) => p.name === name);
	let args: Record<string, string> = {};
	if (info?.arguments && info.arguments.length > 0) {
		const got = await argumentsForm(`Get the prompt ${printable(name)}`, promptSchema(info), 'Get');
		if (!got) return;
		args = got as Record<string, string>;
	}
	try {
		const r = await sess.getPrompt(server, name, args);
		const d = promptDoc(server, name, r, args);
		showDocument(d.name, d.content);
	} catch (e) {
		failed(`Getting the prompt ${name}`, e);
	}
}

async function review(t: ToolInfo): Promise<void> {
	const sess = session;
	if (!sess || t.server === undefined) return;
	const server = t.server;
	try {
		const [r] = await sess.review({ server, tool: t.name, action: 'diff' });
		if (!r) return void notice(`${oneLine(t.id, 120)} awaits no review any more.`);
		const act = (action: 'accept' | 'reject') => () =>
			void sess.review({ server, tool: t.name, action, hash: r.hash }).then(() => sess.refresh(), (e) => failed(`${action} ${t.id}`, e));
		showDocument(`Review ${printable(t.id)}`, reviewDocument(r), [
			{ label: r.kind === 'new' ? 'Accept Tool' : 'Accept Change', run: act('accept') },
			{ label: r.kind === 'new' ? 'Reject Tool' : 'Reject Change', run: act('reject') },
		], 'review');
	} catch (e) {
		failed(`Reviewing ${t.id}`, e);
	}
}

function signInLink(uri: string): Promise<{ success: boolean }> {
	let url: URL;
	try {
		url = new URL(uri);
	} catch {
		return Promise.resolve({ success: false });
	}
	if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.resolve({ success: false });
	return new Promise((resolve) => {
		const a = h('a', { href: url.href, target: '_blank', rel: 'noopener noreferrer', onclick: () => resolve({ success: true }) }, 'Open the sign-in page');
		notice(h('span', {}, 'A server asks you to sign in: ', a, ` (${printable(url.host)})`), 'warning');
	});
}

async function readExtras(): Promise<void> {
	const sess = session;
	if (!sess) return;
	await Promise.all(
		model
			.servers()
			.filter((s) => s.state === 'connected')
			.map(async (s) => {
				const [r, p] = await Promise.all([sess.resources(s.name).catch(() => []), sess.prompts(s.name).catch(() => [])]);
				model.setResources(s.name, r);
				model.setPrompts(s.name, p);
			}),
	);
}

async function main(): Promise<void> {
	view.render(sidecar);
	let ws: WebSocket;
	try {
		ws = await openSocket(rpcURL(location));
	} catch {
		// The WebSocket says nothing of why it was refused: the page's own
		// origin answering means the sidecar runs and this browser has no
		// session with it.
		const runs = await fetch('/', { method: 'HEAD', cache: 'no-store' }).then(
			(r) => r.ok,
			() => false,
		);
		sidecar = runs ? 'signedOut' : 'stopped';
		view.render(sidecar);
		notice(
			runs
				? 'This browser is not signed in to the FreeCode sidecar, which runs: run `freecode web` (it opens the page signed in), or open the link `freecode web --no-browser` prints.'
				: 'This page cannot reach the FreeCode sidecar: it is not running at this address. Run `freecode web` to start it and open the page.',
			'error',
		);
		return;
	}
	const conn = connection(ws);
	const sess: Session = new Session(conn, model, {
		askPermission: (req, token): Promise<PermissionResponse> => askPermission(req, model.tool(req.tool), hasProject, () => sess.trust(true), (fn) => token.onCancellationRequested(fn)),
		serverLog: (l: ServerLog) => view.logged(logs.add(l)),
		warn: (m) => console.warn(`FreeCode: ${m}`),
	});
	sess.listen();
	conn.onRequest('window/showDocument', (params: { uri: string }) => signInLink(params.uri));
	conn.onNotification('window/logMessage', (params: { type: number; message: string }) => {
		notice(printable(params.message), params.type === 1 ? 'error' : params.type === 2 ? 'warning' : 'info');
	});
	conn.onClose(() => {
		session = undefined;
		installButton.disabled = true;
		sidecar = 'stopped';
		render();
		notice('The connection to the sidecar closed. Reload the page once it runs again.', 'error');
	});
	conn.listen();
	try {
		await conn.sendRequest('initialize', {
			processId: null,
			clientInfo: { name: 'freecode-web' },
			rootUri: null,
			capabilities: { window: { showDocument: { support: true } } },
			initializationOptions: { capabilities: { elicitation: false, sampling: false } },
		});
		await conn.sendNotification('initialized', {});
	} catch (e) {
		failed('Connecting to the sidecar', e);
		return;
	}
	session = sess;
	sidecar = 'running';
	installButton.disabled = false;
	try {
		const proj = await sess.project();
		hasProject = proj.root !== undefined;
		for (const p of proj.problems ?? []) model.setProblems(p);
	} catch (e) {
		failed('Reading the project', e);
	}
	await sess.refresh();
	await readExtras();
	render();
}

void main();
