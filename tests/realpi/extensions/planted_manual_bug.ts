/**
 * A continuity "implementation" with a planted bug, for the real-Pi explorer's own test.
 *
 * It fails closed at every automatic check point (it cancels), as the spec asks, but a manual
 * compaction commits a summary that is not a Continuity Brief: only a run with a manual
 * compaction (after some history) breaks `commit_is_valid_brief`, so exploration must find one
 * and shrink it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
	pi.on("session_before_compact", (event) => {
		if (event.reason !== "manual") {
			return { cancel: true };
		}
		return {
			compaction: {
				summary: "PLANTED BUG: not a Continuity Brief",
				firstKeptEntryId: event.preparation.firstKeptEntryId,
				tokensBefore: event.preparation.tokensBefore,
			},
		};
	});
}
