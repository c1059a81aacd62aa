// How an MCP Apps view takes VS Code's look: the standard style variables
// of the Apps extension (hostContext.styles.variables, "--color-text-primary"
// and the like), each read from the VS Code theme variable that means the
// same thing. The page reads them where VS Code puts them (its own root
// element) and sends them to the extension at start and on every theme
// change; the bridge passes them on in ui/initialize and
// ui/notifications/host-context-changed. Pure: no `vscode` import.

/** Each Apps style variable, with the VS Code theme variables it is read from, first found wins. */
export const STYLE_SOURCES: Readonly<Record<string, readonly string[]>> = {
	'--color-background-primary': ['--vscode-editor-background'],
	'--color-background-secondary': ['--vscode-sideBar-background', '--vscode-editorWidget-background'],
	'--color-background-tertiary': ['--vscode-editorWidget-background', '--vscode-input-background'],
	'--color-background-inverse': ['--vscode-editor-foreground', '--vscode-foreground'],
	'--color-background-ghost': ['--vscode-toolbar-hoverBackground'],
	'--color-background-info': ['--vscode-inputValidation-infoBackground'],
	'--color-background-danger': ['--vscode-inputValidation-errorBackground'],
	'--color-background-warning': ['--vscode-inputValidation-warningBackground'],
	'--color-background-disabled': ['--vscode-input-background'],
	'--color-text-primary': ['--vscode-editor-foreground', '--vscode-foreground'],
	'--color-text-secondary': ['--vscode-descriptionForeground'],
	'--color-text-tertiary': ['--vscode-disabledForeground', '--vscode-descriptionForeground'],
	'--color-text-inverse': ['--vscode-editor-background'],
	'--color-text-info': ['--vscode-textLink-foreground'],
	'--color-text-danger': ['--vscode-errorForeground'],
	'--color-text-success': ['--vscode-testing-iconPassed'],
	'--color-text-warning': ['--vscode-editorWarning-foreground'],
	'--color-text-disabled': ['--vscode-disabledForeground'],
	'--color-border-primary': ['--vscode-panel-border', '--vscode-widget-border'],
	'--color-border-secondary': ['--vscode-widget-border', '--vscode-panel-border'],
	'--color-border-info': ['--vscode-inputValidation-infoBorder'],
	'--color-border-danger': ['--vscode-inputValidation-errorBorder'],
	'--color-border-warning': ['--vscode-inputValidation-warningBorder'],
	'--color-ring-primary': ['--vscode-focusBorder'],
	'--font-sans': ['--vscode-font-family'],
	'--font-mono': ['--vscode-editor-font-family'],
	'--font-weight-normal': ['--vscode-font-weight'],
	'--font-text-md-size': ['--vscode-font-size'],
};

/** The longest value taken for one variable: a theme's colours and font stacks are far shorter. */
const maxValue = 500;

/** The theme as the page reports it: VS Code's kind of theme and the Apps style variables. */
export interface PageTheme {
	theme: 'light' | 'dark';
	variables: Record<string, string>;
}

/**
 * pageTheme checks what the page sent as its theme: only the known
 * variables, as strings of a sane length, with nothing that could end a
 * declaration. Anything else is left out; undefined if it is not a theme.
 */
export function pageTheme(raw: unknown): PageTheme | undefined {
	if (raw === null || typeof raw !== 'object') return undefined;
	const r = raw as { theme?: unknown; variables?: unknown };
	if (r.theme !== 'light' && r.theme !== 'dark') return undefined;
	const variables: Record<string, string> = {};
	if (r.variables !== null && typeof r.variables === 'object') {
		for (const [k, v] of Object.entries(r.variables as Record<string, unknown>)) {
			if (!Object.hasOwn(STYLE_SOURCES, k) || typeof v !== 'string') continue;
			const value = v.trim();
			if (value === '' || value.length > maxValue || /[;{}<>]/.test(value)) continue;
			variables[k] = value;
		}
	}
	return { theme: r.theme, variables };
}

/**
 * themeScript is the page's part, run in the webview: it reads the
 * variables from the root element's computed style and the theme from the
 * body's class, and calls send with them now and whenever VS Code changes
 * either. The argument is the one acquireVsCodeApi result.
 */
export function themeScript(hostVar: string): string {
	return `(function () {
	const sources = ${JSON.stringify(STYLE_SOURCES)};
	const read = () => {
		const style = getComputedStyle(document.documentElement);
		const variables = {};
		for (const [k, from] of Object.entries(sources)) {
			for (const name of from) {
				const v = style.getPropertyValue(name).trim();
				if (v) { variables[k] = v; break; }
			}
		}
		const light = document.body.classList.contains('vscode-light') || document.body.classList.contains('vscode-high-contrast-light');
		return { theme: light ? 'light' : 'dark', variables };
	};
	let last = '';
	const send = () => {
		const t = read();
		const text = JSON.stringify(t);
		if (text === last) return;
		last = text;
		${hostVar}.postMessage({ theme: t });
	};
	send();
	const watch = new MutationObserver(send);
	watch.observe(document.body, { attributes: true, attributeFilter: ['class'] });
	watch.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
})();`;
}
