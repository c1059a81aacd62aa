// The Install from the MCP Registry dialog: a search box that searches as
// one types (freecode/registry/search), the servers found, and once one is
// chosen the form of the values its install asks (freecode/registry/values:
// a password input for a secret, a list for choices, defaults filled in),
// then Install (freecode/registry/install). An error is shown in the
// dialog, which keeps what was typed; the secrets typed are emptied from
// their inputs as the dialog goes.

import type {
	RegistryInstallParams,
	RegistryInstallResult,
	RegistrySearchResult,
	RegistryValuesResult,
	ServerScope,
} from '../../frontend/src/protocol.gen';
import { printable } from '../../frontend/src/text';
import { button, h } from './dom';
import { howItRuns, LatestSearch, maxResults, readValues, resultLines, searchStatus, valueFields, type ValueField } from './registryForm';

/** Registry is what the dialog asks of the sidecar (the Session's requests). */
export interface Registry {
	search(query: string, limit: number): Promise<RegistrySearchResult>;
	values(name: string, version: string): Promise<RegistryValuesResult>;
	install(params: RegistryInstallParams): Promise<RegistryInstallResult>;
}

function message(e: unknown): string {
	return printable((e as Error)?.message ?? String(e));
}

function fieldInput(f: ValueField): HTMLInputElement | HTMLSelectElement {
	const id = `value-${f.name}`;
	if (f.kind === 'choice') {
		const s = h('select', { id, name: f.name });
		if (!f.initial) s.append(h('option', { value: '' }, '(choose one)'));
		for (const c of f.choices) s.append(h('option', { value: c, selected: c === f.initial }, printable(c)));
		return s;
	}
	const i = h('input', {
		id,
		name: f.name,
		type: f.kind === 'secret' ? 'password' : 'text',
		autocomplete: 'off',
		spellcheck: 'false',
		autocapitalize: 'off',
	});
	i.value = f.initial;
	return i;
}

/**
 * installDialog opens the dialog and resolves with what the install did,
 * or undefined when it was closed without one.
 */
export function installDialog(reg: Registry): Promise<RegistryInstallResult | undefined> {
	return new Promise((resolve) => {
		let result: RegistryInstallResult | undefined;
		const errors = h('p', { class: 'errors', role: 'alert' });
		const query = h('input', {
			id: 'registry-query',
			type: 'search',
			autocomplete: 'off',
			spellcheck: 'false',
			'aria-label': 'Search the MCP Registry',
			placeholder: 'Search by name, title or description',
		});
		const status = h('p', { class: 'status', role: 'status' }, 'Searching…');
		const list = h('ul', { class: 'results' });
		const search = h('section', { class: 'search' }, query, status, list);
		const chosen = h('section', { class: 'chosen', hidden: true });
		const cancel = button('Cancel', () => d.close());
		const back = button('Back', () => showSearch(), { hidden: true });
		const install = button('Install', () => void doInstall(), { class: 'allow', hidden: true });
		const d = h('dialog', { class: 'install' }, h('h2', {}, 'Install from the MCP Registry'), search, chosen, errors, h('div', { class: 'buttons' }, cancel, back, install));

		const searcher = new LatestSearch(
			(q: string) => reg.search(q, maxResults),
			(q, r) => {
				errors.textContent = '';
				status.textContent = `${searchStatus(q, r.entries.length, r.total)} (${printable(r.registry)})`;
				list.replaceChildren(
					...r.entries.map((e) => {
						const l = resultLines(e);
						const pick = h(
							'button',
							{ type: 'button', class: 'pick', title: `Install ${l.head}`, onclick: () => void choose(e.name, e.version) },
							h('strong', { class: 'head' }, l.head),
							l.title ? h('span', { class: 'title' }, l.title) : '',
							l.status ? h('span', { class: 'mark review' }, l.status) : '',
							h('small', { class: 'runs' }, l.runs),
							h('span', { class: 'desc' }, l.description),
						);
						return h('li', { 'data-name': e.name, 'data-version': e.version }, pick);
					}),
				);
			},
			(_q, e) => {
				status.textContent = '';
				errors.textContent = `Searching the registry failed: ${message(e)}`;
			},
		);
		query.addEventListener('input', () => searcher.typed(query.value));
		query.addEventListener('keydown', (ev) => {
			if (ev.key === 'Enter') {
				ev.preventDefault();
				searcher.now(query.value);
			}
		});

		let fields: ValueField[] = [];
		let inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
		let picked: RegistryValuesResult | undefined;
		let choosing = 0;

		function showSearch(): void {
			picked = undefined;
			chosen.hidden = true;
			chosen.replaceChildren();
			search.hidden = false;
			back.hidden = install.hidden = true;
			errors.textContent = '';
			query.focus();
		}

		async function choose(name: string, version: string): Promise<void> {
			const n = ++choosing;
			errors.textContent = '';
			status.textContent = `Reading ${printable(name)}@${printable(version)}…`;
			let v: RegistryValuesResult;
			try {
				v = await reg.values(name, version);
			} catch (e) {
				if (n !== choosing) return;
				status.textContent = '';
				errors.textContent = `${printable(name)}@${printable(version)} cannot be installed: ${message(e)}`;
				return;
			}
			if (n !== choosing || !d.open) return;
			picked = v;
			fields = valueFields(v.values);
			const form = h('form', {
				method: 'dialog',
				onsubmit: (ev) => {
					ev.preventDefault();
					void doInstall();
				},
			});
			const entry = h('input', { id: 'install-entry', name: 'entryName', type: 'text', autocomplete: 'off', spellcheck: 'false' });
			entry.value = v.entryName;
			form.append(h('label', { for: 'install-entry' }, 'Name', h('small', {}, 'the entry’s name: tool ids are mcp__<name>__<tool>')), entry);
			if (v.projectScope) {
				const scope = h('select', { id: 'install-scope', name: 'scope' }, h('option', { value: 'user' }, 'your config (all your projects)'), h('option', { value: 'project' }, 'this project’s settings (runs once approved)'));
				form.append(h('label', { for: 'install-scope' }, 'Where'), scope);
			}
			inputs = new Map();
			for (const f of fields) {
				const input = fieldInput(f);
				inputs.set(f.name, input);
				form.append(h('label', { for: `value-${f.name}` }, f.label, f.hint ? h('small', {}, f.hint) : ''), input);
			}
			if (fields.length === 0) form.append(h('p', { class: 'none' }, 'It asks for no value.'));
			// Enter in a field installs, as the button does.
			form.append(h('button', { type: 'submit', hidden: true }));
			const title = v.title ? `${printable(v.title)}: ` : '';
			chosen.replaceChildren(
				h('h3', {}, `${printable(v.name)}@${printable(v.version)}`),
				h('p', { class: 'about' }, title + printable(v.description)),
				h('p', { class: 'how' }, `Runs as ${howItRuns(v)}`),
				v.status ? h('p', { class: 'warning' }, `This version is ${printable(v.status)}${v.statusMessage ? `: ${printable(v.statusMessage)}` : ''}`) : '',
				form,
			);
			search.hidden = true;
			chosen.hidden = false;
			back.hidden = install.hidden = false;
			status.textContent = '';
			(form.querySelector('input, select') as HTMLElement | null)?.focus();
		}

		let installing = false;
		async function doInstall(): Promise<void> {
			const v = picked;
			if (!v || installing) return;
			const texts = new Map<string, string>();
			// Each field's own element: a value the registry names
			// "entryName" or "scope" is not the dialog's field of that name.
			for (const f of fields) texts.set(f.name, inputs.get(f.name)?.value ?? '');
			const got = readValues(fields, texts);
			if ('errors' in got) {
				errors.textContent = got.errors.map((e) => `${printable(e.field)}: ${e.message}`).join(' ');
				return;
			}
			const entryName = (chosen.querySelector('#install-entry') as HTMLInputElement).value.trim();
			const scope = ((chosen.querySelector('#install-scope') as HTMLSelectElement | null)?.value ?? 'user') as ServerScope;
			installing = true;
			install.disabled = back.disabled = true;
			errors.textContent = '';
			status.textContent = '';
			chosen.setAttribute('aria-busy', 'true');
			try {
				result = await reg.install({ name: v.name, version: v.version, runs: v.runs, scope, entryName: entryName || undefined, values: got.values });
				d.close();
			} catch (e) {
				errors.textContent = `Installing ${printable(v.name)}@${printable(v.version)} failed: ${message(e)}`;
			} finally {
				installing = false;
				install.disabled = back.disabled = false;
				chosen.removeAttribute('aria-busy');
			}
		}

		d.addEventListener('close', () => {
			searcher.close();
			for (const i of d.querySelectorAll<HTMLInputElement>('input[type="password"]')) i.value = '';
			d.remove();
			resolve(result);
		});
		document.body.append(d);
		d.showModal();
		query.focus();
		searcher.now('');
	});
}
