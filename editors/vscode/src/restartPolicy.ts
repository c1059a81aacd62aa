// How often the sidecar is restarted after it crashed: at most max crashes
// within window, then the extension stops and explains. The clock is passed
// in so the tests need no real time. Pure.

/** RestartBudget counts crashes within a sliding window. */
export class RestartBudget {
	private crashes: number[] = [];

	constructor(
		readonly max = 5,
		readonly windowMs = 3 * 60 * 1000,
		private readonly now: () => number = Date.now,
	) {}

	/** crashed records a crash and says whether one more restart is allowed. */
	crashed(): boolean {
		const t = this.now();
		this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
		this.crashes.push(t);
		return this.crashes.length <= this.max;
	}

	/** recent is how many crashes the window holds. */
	get recent(): number {
		const t = this.now();
		return this.crashes.filter((c) => t - c < this.windowMs).length;
	}

	/** reset forgets the crashes (a restart the user asked for). */
	reset(): void {
		this.crashes = [];
	}
}
