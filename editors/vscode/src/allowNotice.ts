// What the user is told after an "always allow" answer: which rule was
// written to which file (and that the project was trusted, when the answer
// did that too), with an Undo. "Trust Project and Always Allow Here" acted
// in silence before, and the rule it wrote later let an MCP App's Delete
// button run without asking. Undo takes the rule back
// (freecode/permissions/removeAllow: out of the file and the session) and,
// when the same step trusted the project, withdraws that trust. Pure: no
// `vscode` import; the prompt gives it the editor's calls.

import type { PermissionResponse, PermissionScope, RemoveAllowResult, SettingsPaths } from '../../../frontend/src/protocol.gen';
import { printable } from '../../../frontend/src/text';

export const UNDO = 'Undo';
export const OPEN_FILE = 'Open Rules File';

/** AllowStep is one "always allow" answer, as the prompt gave it. */
export interface AllowStep {
	/** The rule the sidecar writes: the tool's id. */
	rule: string;
	scope: PermissionScope;
	/** The project was trusted in the same step ("Trust Project and Always Allow Here"). */
	trusted: boolean;
}

/** allowStep is the step an answer took, or undefined when it allowed nothing for good. */
export function allowStep(tool: string, answer: PermissionResponse, trusted: boolean): AllowStep | undefined {
	if (answer.decision !== 'allowAlways') return undefined;
	return { rule: tool, scope: answer.scope ?? 'user', trusted };
}

/** Where is what allowNotice needs to name the file: the sidecar's project and the user's home. */
export interface Where {
	root?: string;
	settingsPaths?: SettingsPaths;
	home?: string;
}

/** ruleFile is the file an answer of scope is written to: the project's settings.local.json, else (or without a project) the user's settings.json. */
export function ruleFile(scope: PermissionScope, w: Where): string | undefined {
	if (scope === 'local' && w.root) return w.settingsPaths?.local;
	return w.settingsPaths?.user;
}

/** shortPath names a file as the user knows it: inside the project relative to it, under the home with ~. */
export function shortPath(path: string, w: Where): string {
	const under = (dir: string | undefined) => dir && (path.startsWith(`${dir}/`) || path.startsWith(`${dir}\\`));
	if (under(w.root)) return path.slice(w.root!.length + 1);
	if (under(w.home)) return `~${path.slice(w.home!.length)}`;
	return path;
}

/** allowMessage says what the step did: the trust, the rule and its file, and what that means. */
export function allowMessage(step: AllowStep, w: Where): string {
	const file = ruleFile(step.scope, w);
	const where = file ? printable(shortPath(file, w)) : step.scope === 'local' && w.root ? "this project's settings.local.json" : 'your settings.json';
	const rule = `the allow rule "${printable(step.rule)}"`;
	const reach = step.scope === 'local' && w.root ? 'in this project' : 'in every project';
	const did = step.trusted ? `Trusted this project and added ${rule} to ${where}` : `Added ${rule} to ${where}`;
	return `${did}: ${printable(step.rule)} now runs without asking ${reach}, for models and MCP Apps alike.`;
}

/** AllowUI is what allowNotice needs of the editor and the sidecar. */
export interface AllowUI {
	showInfo(message: string, ...buttons: string[]): PromiseLike<string | undefined>;
	showError(message: string): void;
	openFile(path: string): void;
	removeAllow(rule: string, scope: PermissionScope): Promise<RemoveAllowResult>;
	untrust(): Promise<void>;
}

/**
 * allowNotice tells the user what the step wrote, with Undo (and the file
 * a click away); it resolves once the pick was acted on. Undo takes the
 * rule back first, then the trust: a project left trusted with the rule
 * gone asks for the tool again, where the other way round the rule would
 * be in force for a moment in an untrusted project.
 */
export async function allowNotice(step: AllowStep, w: Where, ui: AllowUI): Promise<void> {
	const file = ruleFile(step.scope, w);
	const pick = await ui.showInfo(allowMessage(step, w), ...(file ? [UNDO, OPEN_FILE] : [UNDO]));
	if (pick === OPEN_FILE && file) {
		ui.openFile(file);
		return;
	}
	if (pick !== UNDO) return;
	const rule = `"${printable(step.rule)}"`;
	let res: RemoveAllowResult;
	try {
		res = await ui.removeAllow(step.rule, step.scope);
	} catch (e) {
		ui.showError(`Taking back the allow rule ${rule} failed: ${(e as Error).message}`);
		return;
	}
	let untrusted = '';
	if (step.trusted) {
		try {
			await ui.untrust();
			untrusted = ', and this project is no longer trusted';
		} catch (e) {
			ui.showError(`The allow rule ${rule} is taken back, but withdrawing trust in this project failed: ${(e as Error).message}`);
		}
	}
	const from = printable(shortPath(res.path, w));
	const what = res.removed ? `Removed the allow rule ${rule} from ${from}` : `The allow rule ${rule} was not in ${from}; its allow for this session is gone`;
	void ui.showInfo(`${what}${untrusted}: ${printable(step.rule)} asks again.`);
}
