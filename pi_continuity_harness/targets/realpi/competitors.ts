/**
 * TypeScript twins of `scenario/competitors.py`: a second extension that also answers
 * `session_before_compact`, the competing-extension fault. Same behaviour names, same replies.
 * The real-Pi target generates a wrapper per competitor slot:
 *     import { competitor } from "<this file>";
 *     export default competitor("cancel");
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_DIR_NAME, type ExtensionAPI } from "@earendil-works/pi-coding-agent";

export type CompetitorBehaviour =
	| "abort"
	| "cancel"
	| "empty"
	| "own_compaction"
	| "reissue_brief"
	| "throw"
	| "none";

/** The newest `*.md` under `<cwd>/<CONFIG_DIR_NAME>/session-continuity/<session>/pending/` (ties by path). */
function newestPendingBrief(cwd: string): string | undefined {
	const root = join(cwd, CONFIG_DIR_NAME, "session-continuity");
	const found: { path: string; mtime: bigint }[] = [];
	let sessions: string[] = [];
	try {
		sessions = readdirSync(root);
	} catch {
		return undefined;
	}
	for (const session of sessions) {
		const pending = join(root, session, "pending");
		let names: string[] = [];
		try {
			names = readdirSync(pending);
		} catch {
			continue;
		}
		for (const name of names) {
			if (!name.endsWith(".md")) continue;
			const path = join(pending, name);
			found.push({ path, mtime: statSync(path, { bigint: true }).mtimeNs });
		}
	}
	found.sort((a, b) => (a.mtime === b.mtime ? (a.path < b.path ? -1 : 1) : a.mtime < b.mtime ? -1 : 1));
	const last = found[found.length - 1];
	return last === undefined ? undefined : readFileSync(last.path, "utf8");
}

export function competitor(behaviour: CompetitorBehaviour): (pi: ExtensionAPI) => void {
	return (pi: ExtensionAPI): void => {
		let count = 0;
		pi.on("session_before_compact", (event, ctx) => {
			count += 1;
			switch (behaviour) {
				case "abort":
					ctx.abort();
					return undefined;
				case "cancel":
					return { cancel: true };
				case "empty":
					return {};
				case "throw":
					throw new Error("boom from competitor");
				case "reissue_brief": {
					const brief = newestPendingBrief(ctx.cwd);
					if (brief === undefined) return undefined;
					return {
						compaction: {
							summary: brief,
							firstKeptEntryId: event.preparation.firstKeptEntryId,
							tokensBefore: event.preparation.tokensBefore,
							details: { by: "competitor" },
						},
					};
				}
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
