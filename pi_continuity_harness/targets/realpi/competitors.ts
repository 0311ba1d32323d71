/**
 * TypeScript twins of `scenario/competitors.py`: a second extension that also answers
 * `session_before_compact`, the competing-extension fault. Same behaviour names, same replies.
 * The real-Pi target generates a wrapper per competitor slot:
 *     import { competitor } from "<this file>";
 *     export default competitor("cancel");
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_DIR_NAME, type ExtensionAPI } from "@earendil-works/pi-coding-agent";

export type CompetitorBehaviour =
	| "abort"
	| "cancel"
	| "empty"
	| "own_compaction"
	| "reissue_brief"
	| "reissue_brief_but_continuityEventId"
	| "reissue_brief_but_artifactPath"
	| "reissue_brief_but_sha256"
	| "reissue_brief_but_sessionId"
	| "throw"
	| "none";

/** The detail each `reissue_brief_but_<field>` gets wrong, with the wrong value. */
const WRONG_DETAIL: Record<string, string> = {
	continuityEventId: "00000000-0000-4000-8000-000000000000",
	artifactPath: "/elsewhere/pending/other.md",
	sha256: "0".repeat(64),
	sessionId: "another-session",
};

/** The details that describe the Brief at `path`, as the reference writes them (spec §8, §18). */
function briefDetails(path: string, brief: string): Record<string, string> {
	const head = brief.split("\n---\n", 1)[0];
	const field = (name: string): string => new RegExp(`^${name}: "([^"]*)"$`, "m").exec(head)?.[1] ?? "";
	return {
		continuityEventId: field("eventId"),
		artifactPath: path,
		sha256: createHash("sha256").update(brief, "utf8").digest("hex"),
		sessionId: field("sessionId"),
	};
}

/** The newest `*.md` under `<cwd>/<CONFIG_DIR_NAME>/session-continuity/<session>/pending/` (ties by path). */
function newestPendingBrief(cwd: string): { path: string; text: string } | undefined {
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
	return last === undefined ? undefined : { path: last.path, text: readFileSync(last.path, "utf8") };
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
				case "reissue_brief":
				case "reissue_brief_but_continuityEventId":
				case "reissue_brief_but_artifactPath":
				case "reissue_brief_but_sha256":
				case "reissue_brief_but_sessionId": {
					const found = newestPendingBrief(ctx.cwd);
					if (found === undefined) return undefined;
					const wrong = behaviour.replace("reissue_brief_but_", "");
					return {
						compaction: {
							summary: found.text,
							firstKeptEntryId: event.preparation.firstKeptEntryId,
							tokensBefore: event.preparation.tokensBefore,
							details:
								behaviour === "reissue_brief"
									? { by: "competitor" }
									: { ...briefDetails(found.path, found.text), [wrong]: WRONG_DETAIL[wrong] },
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
