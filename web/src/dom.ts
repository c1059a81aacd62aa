// A small helper for building the page's elements. Text always goes in as
// text nodes, never as HTML: what a server sends is shown, never run.

type Child = Node | string | false | null | undefined;
type Attrs = Record<string, string | boolean | ((ev: Event) => void) | undefined>;

/** h makes an element: attributes (on* ones as listeners, booleans as present or absent) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs)) {
		if (v === undefined || v === false) continue;
		if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
		else if (v === true) el.setAttribute(k, '');
		else el.setAttribute(k, v);
	}
	for (const c of children) {
		if (c === false || c === null || c === undefined) continue;
		el.append(typeof c === 'string' ? document.createTextNode(c) : c);
	}
	return el;
}

/** button is a <button type="button"> that runs fn on click. */
export function button(label: string, fn: () => void, attrs: Attrs = {}): HTMLButtonElement {
	return h('button', { type: 'button', onclick: () => fn(), ...attrs }, label);
}
