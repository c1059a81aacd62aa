import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageTheme, STYLE_SOURCES, themeScript } from '../src/appTheme';

test('app theme: only known variables with plain values are passed on', () => {
	assert.deepEqual(
		pageTheme({
			theme: 'dark',
			variables: {
				'--color-background-primary': ' #1f1f1f ',
				'--font-sans': '-apple-system, "Segoe UI", sans-serif',
				'--color-text-primary': 'red; background: url(https://x.example/)',
				'--color-text-danger': '}</style><script>',
				'--not-a-style': '#000',
				'--color-text-info': 7,
				'--color-border-primary': 'x'.repeat(501),
				'--color-ring-primary': '',
			},
		}),
		{ theme: 'dark', variables: { '--color-background-primary': '#1f1f1f', '--font-sans': '-apple-system, "Segoe UI", sans-serif' } },
	);
	assert.deepEqual(pageTheme({ theme: 'light' }), { theme: 'light', variables: {} });
	assert.equal(pageTheme({ theme: 'sepia', variables: {} }), undefined);
	assert.equal(pageTheme(null), undefined);
	assert.equal(pageTheme('dark'), undefined);
});

test('app theme: every source is a VS Code theme variable, every key an Apps style variable', () => {
	for (const [k, from] of Object.entries(STYLE_SOURCES)) {
		assert.match(k, /^--(color|font|border|shadow)-/);
		assert.ok(from.length > 0, k);
		for (const f of from) assert.match(f, /^--vscode-[A-Za-z.-]+$/, `${k} <- ${f}`);
	}
	// The script the page runs is what the table says, and compiles.
	const script = themeScript('host');
	assert.ok(script.includes(JSON.stringify(STYLE_SOURCES)));
	assert.doesNotThrow(() => new Function(script));
});
