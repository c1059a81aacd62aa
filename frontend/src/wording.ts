// Words for what the sidecar reports in its own terms: why a call asks
// (permissions' reasons), and when a server connected (RFC 3339 UTC). Pure:
// no `vscode` import; now and the time zone come from the caller or the
// process.

/**
 * whyAsked turns the permission engine's reason into a sentence a user
 * reads once and understands: which rule, or that none applies, and so
 * why they see the prompt (an organization's managed rule says so). A
 * reason it does not know is shown as it is.
 */
export function whyAsked(reason: string): string {
	if (reason === 'no rule; tool is not read-only') {
		return 'No rule of yours covers this tool, and it can change things, so FreeCode asks before each call.';
	}
	if (reason === 'no rule; tool is read-only') {
		return 'No rule of yours covers this tool.';
	}
	// A managed ask rule holds whatever was answered before, and no rule of
	// the user's loosens it: say that it is every call, and whose rule.
	const org = /^your organization's ask rule (".*") in (.+)$/.exec(reason);
	if (org) {
		return `Your organization asks before every call of this tool: its rule ${org[1]} in ${org[2]}.`;
	}
	const ask = /^ask rule (".*") (in (.+)|for this session)$/.exec(reason);
	if (ask) {
		const where = ask[3] !== undefined ? `in ${ask[3]}` : 'for this session';
		return `A rule ${where}, ${ask[1]}, says to ask before this tool runs.`;
	}
	return reason;
}

function plural(n: number, unit: string): string {
	return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** ago says how long before now t is, in the largest whole unit ("just now" under a minute). */
export function ago(t: number, now: number): string {
	const s = Math.round((now - t) / 1000);
	if (s < 60) return 'just now';
	const m = Math.floor(s / 60);
	if (m < 60) return `${plural(m, 'minute')} ago`;
	const h = Math.floor(m / 60);
	if (h < 48) return `${plural(h, 'hour')} ago`;
	return `${plural(Math.floor(h / 24), 'day')} ago`;
}

function two(n: number): string {
	return String(n).padStart(2, '0');
}

/**
 * since is an RFC 3339 time as local time and how long ago: "14:03 (5
 * minutes ago)", the date too when it is not today's. An unreadable time is
 * shown as it came.
 */
export function since(rfc3339: string, now: number): string {
	const t = Date.parse(rfc3339);
	if (Number.isNaN(t)) return rfc3339;
	const d = new Date(t);
	const n = new Date(now);
	const clock = `${two(d.getHours())}:${two(d.getMinutes())}`;
	const sameDay = d.getFullYear() === n.getFullYear() && d.getMonth() === n.getMonth() && d.getDate() === n.getDate();
	const day = sameDay ? '' : `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} `;
	return `${day}${clock} (${ago(t, now)})`;
}
