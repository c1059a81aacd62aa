// The permission modal's row of buttons. VS Code adds a Cancel of its own to
// every modal, so with Deny, Allow Once and up to three "always" choices the
// row held six buttons; the "always" choices, when there are several, sit
// behind one button that asks where in a quick pick (a choice that writes a
// rule file deserves the second step). Pure: no `vscode` import.

import { ALLOW_EVERYWHERE, ALLOW_PROJECT, TRUST_AND_ALLOW_PROJECT, type Choice, type Prompt } from '../../../frontend/src/permissionChoices';

/** ALWAYS_ALLOW is the button that opens the "always" choices. */
export const ALWAYS_ALLOW = 'Always Allow…';

/** What each "always" choice writes, for its row in the quick pick. */
const where: Record<string, string> = {
	[ALLOW_PROJECT]: "an allow rule in this project's .freecode/settings.local.json",
	[TRUST_AND_ALLOW_PROJECT]: "trusts the project's rule files as they are now, then writes an allow rule in its .freecode/settings.local.json",
	[ALLOW_EVERYWHERE]: 'an allow rule in ~/.freecode/settings.json, for every project',
};

/** ModalRow is what the modal shows, and the choices its ALWAYS_ALLOW button opens. */
export interface ModalRow {
	row: Choice[];
	always: { label: string; detail: string }[];
}

/** modalRow is prompt's buttons as the modal shows them. */
export function modalRow(prompt: Prompt): ModalRow {
	const always = prompt.choices.filter((c) => c.answer?.decision === 'allowAlways');
	if (always.length < 2) return { row: prompt.choices, always: [] };
	const row: Choice[] = [];
	for (const c of prompt.choices) {
		if (!always.includes(c)) row.push(c);
		else if (c === always[0]) row.push({ title: ALWAYS_ALLOW });
	}
	return { row, always: always.map((c) => ({ label: c.title, detail: where[c.title] ?? '' })) };
}
