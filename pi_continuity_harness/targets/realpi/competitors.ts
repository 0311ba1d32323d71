/**
 * TypeScript twins of `scenario/competitors.py`: a second extension that also answers
 * `session_before_compact`, the competing-extension fault. Same behaviour names, same replies.
 * The real-Pi target generates a wrapper per competitor slot:
 *     import { competitor } from "<this file>";
 *     export default competitor("cancel");
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export type CompetitorBehaviour = "cancel" | "empty" | "own_compaction" | "throw" | "none";

export function competitor(behaviour: CompetitorBehaviour): (pi: ExtensionAPI) => void {
	return (pi: ExtensionAPI): void => {
		let count = 0;
		pi.on("session_before_compact", (event) => {
			count += 1;
			switch (behaviour) {
				case "cancel":
					return { cancel: true };
				case "empty":
					return {};
				case "throw":
					throw new Error("boom from competitor");
				case "own_compaction":
					return {
						compaction: {
							summary: `COMPETITOR-SUMMARY-${count}`,
							firstKeptEntryId: event.preparation.firstKeptEntryId,
							tokensBefore: event.preparation.tokensBefore,
							details: { by: "competitor" },
						},
					};
				default:
					return undefined;
			}
		});
	};
}
