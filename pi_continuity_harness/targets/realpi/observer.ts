/**
 * Pi Continuity Harness observer: a passive Pi 1.6 extension.
 *
 * Appends one JSON line per extension-only event (the ones RPC mode does not stream) to the
 * file named by env PI_HARNESS_OBSERVER_LOG. Every handler returns (or resolves to) undefined,
 * so the observer never customises, cancels or transforms anything.
 *
 * Load it FIRST (`-e observer.ts -e ext...`): handlers run in load order, and a
 * `session_before_compact` cancel from an earlier extension stops dispatch, so only an observer
 * loaded first is guaranteed to see every `session_before_compact` (and every raw `input`
 * before another handler transforms or handles it). Returning nothing, it cannot override a
 * later extension's result ("last truthy result wins").
 *
 * Lines: {"seq": n, "type": "<event>", ...fields}. `seq` continues across the fresh extension
 * instances Pi creates on reload / new_session / switch / fork (it is the line count of the file
 * when the instance loads). An `observer_loaded` line marks each new instance.
 *
 * It also registers the command `/harness-reload`, which calls `ctx.reload()` (RPC has no
 * reload command), and `/harness-new-session [parentSessionFile]`, which calls
 * `ctx.newSession({ parentSession })`: the real-Pi target starts a new session through it on the
 * Pi releases whose RPC `new_session` binds the new session's extensions twice (1.0.3-1.5.2:
 * rpc-mode.js calls `rebindSession()` again after `runtimeHost.newSession()` already did, so
 * every `session_start` handler runs twice; see versions.py). It logs
 * `harness_new_session {cancelled}`. On the same releases `/harness-switch-session <file>`
 * (`ctx.switchSession`) and `/harness-fork <before|at> <entryId>` (`ctx.fork`) stand in for RPC
 * `switch_session`, `fork` and `clone`, which rebind twice there too (rpc-mode.js:496-520 in
 * 1.5.2); they log `harness_switch_session` and `harness_fork` `{cancelled}` or `{error}`.
 * `/harness-tree <entryId>` calls `ctx.navigateTree(entryId)` (RPC
 * has no tree command) and logs `tree_navigation {targetId, oldLeafId, newLeafId, cancelled,
 * error}`; `session_tree` is logged as Pi sends it (agent-session.js:3518-3524).
 *
 * `session_compact` also logs `summaryFiles`: the project's files holding the summary's exact bytes
 * when Pi appended the entry (the witness of spec §3 "Durable Continuity Brief first").
 * Its handler then waits until the wall clock has left the millisecond it began in, and so the
 * compaction entry's (`afterThisMillisecond`): the only event handler that is not over at once,
 * for a Pi race on equal timestamps that the simulator never has.
 *
 * Env PI_HARNESS_OBSERVER_TURN_EVENTS=0 skips the turn_start/turn_end handlers. (A turn_end
 * handler makes Pi dispatch its turn_end boundary; that has no visible effect except an
 * `extension_error` from "<boundary>" in the rare case the assistant entry cannot be found.)
 */
import * as fs from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

type Json = Record<string, unknown>;

function modelName(model: { provider?: string; id?: string } | undefined | null): string | null {
	if (!model) return null;
	return `${model.provider ?? "?"}/${model.id ?? "?"}`;
}

/**
 * Resolves once `Date.now()` has left the millisecond it reads now.
 *
 * Why: Pi 1.6 takes an assistant message whose `timestamp` is not later than the latest
 * compaction entry's for one from before that compaction, and skips the compaction checks for
 * it (`assistantMessage.timestamp <= new Date(compactionEntry.timestamp).getTime()`,
 * dist/core/agent-session.js:2515; the same test for usage, :2602). Pi awaits the
 * `session_compact` handlers (:2697-2703, and :2402-2409 for a manual compaction) before the
 * overflow retry or the next prompt makes that message, so a message made in the compaction's
 * own millisecond is a race of the wall clock: when the retry after an overflow compaction
 * failed again, Pi reported "Context overflow recovery failed after one compact-and-retry
 * attempt" (agent-session.js:2550-2571) when the retry began a millisecond or more after the
 * entry, and nothing at all when it began in the same millisecond (1 of 36 compactions on this
 * machine, 6 December 2026; 9 of 200 seeds of `explore --target pi` differed from the
 * simulator in this way, two checked in their session files). The simulator's clock hands out
 * strictly increasing milliseconds (simulator/determinism.py `VirtualClock`), so there a
 * message is always later; waiting here makes real Pi take that same branch every time.
 *
 * The wait starts from the clock, not from the event's `compactionEntry.timestamp`: Pi appended
 * the entry before it called the handlers, so the entry's millisecond is not after this one,
 * while the event may carry an earlier entry with the same summary (the first-equal-summary
 * lookup, agent-session.js:2407, 2696). Returning nothing, the handler changes nothing Pi does
 * but the time (at most about a millisecond per compaction).
 */
function afterThisMillisecond(): Promise<undefined> {
	const now = Date.now();
	return new Promise((resolve) => {
		const poll = (): void => {
			if (Date.now() > now) resolve(undefined);
			else setTimeout(poll, 1);
		};
		setTimeout(poll, 1);
	});
}

function safe(value: unknown): unknown {
	try {
		return value === undefined ? null : JSON.parse(JSON.stringify(value));
	} catch {
		return String(value);
	}
}

/**
 * The files under `root` (the project) whose bytes are exactly the UTF-8 bytes of `summary`,
 * sorted: the witness of spec §3 "Durable Continuity Brief first" at the moment Pi appends the
 * compaction entry. Symbolic links are not followed; unreadable entries are left out. The
 * simulator computes the same (scenario/observed.py summary_files).
 */
function summaryFiles(root: string, summary: string): string[] {
	const data = Buffer.from(summary, "utf8");
	const found: string[] = [];
	const walk = (directory: string): void => {
		let entries: fs.Dirent[];
		try {
			entries = fs.readdirSync(directory, { withFileTypes: true });
		} catch {
			return;
		}
		for (const entry of entries) {
			const path = `${directory}/${entry.name}`;
			if (entry.isDirectory()) {
				walk(path);
			} else if (entry.isFile()) {
				try {
					if (fs.statSync(path).size === data.length && fs.readFileSync(path).equals(data)) found.push(path);
				} catch {
					// Observation must never disturb Pi.
				}
			}
		}
	};
	walk(root);
	return found.sort();
}

export default function observer(pi: ExtensionAPI): void {
	const logPath = process.env.PI_HARNESS_OBSERVER_LOG;
	const turnEvents = process.env.PI_HARNESS_OBSERVER_TURN_EVENTS !== "0";
	const lineCount = (): number => {
		if (!logPath) return 0;
		try {
			return fs.readFileSync(logPath, "utf8").split("\n").filter((line) => line.length > 0).length;
		} catch {
			return 0;
		}
	};
	let seq = lineCount();

	const log = (type: string, fields: Json = {}): void => {
		if (!logPath) return;
		const line = JSON.stringify({ seq: seq++, type, ...fields });
		try {
			fs.appendFileSync(logPath, `${line}\n`, "utf8");
		} catch {
			// Observation must never disturb Pi.
		}
	};

	log("observer_loaded", { pid: process.pid });

	pi.on("session_start", (event, ctx) => {
		log("session_start", { reason: event.reason, previousSessionFile: event.previousSessionFile ?? null });
		// Bookkeeping, not an event: the run's session files in order (`switch_session: {to: N}`).
		log("harness_session_file", { sessionFile: ctx.sessionManager.getSessionFile() ?? null });
	});

	pi.on("session_before_switch", (event) => {
		log("session_before_switch", { reason: event.reason, targetSessionFile: event.targetSessionFile ?? null });
	});

	pi.on("session_before_compact", (event) => {
		const p = event.preparation;
		log("session_before_compact", {
			reason: event.reason,
			willRetry: event.willRetry,
			customInstructions: event.customInstructions ?? null,
			preparation: {
				firstKeptEntryId: p.firstKeptEntryId,
				tokensBefore: p.tokensBefore,
				isSplitTurn: p.isSplitTurn,
				messagesToSummarize: p.messagesToSummarize.length,
				turnPrefixMessages: p.turnPrefixMessages.length,
				previousSummary: p.previousSummary ?? null,
				settings: safe(p.settings),
			},
		});
		return undefined;
	});

	pi.on("session_compact", (event, ctx) => {
		const e = event.compactionEntry;
		// First, before any later extension's handler runs: Pi appended the entry and emitted this
		// event with no await in between (agent-session.js:2402-2409, 2691-2698).
		const witness = typeof e.summary === "string" ? summaryFiles(ctx.cwd, e.summary) : null;
		log("session_compact", {
			reason: event.reason,
			willRetry: event.willRetry,
			fromExtension: event.fromExtension,
			compactionEntry: {
				id: e.id,
				summary: e.summary,
				firstKeptEntryId: e.firstKeptEntryId,
				tokensBefore: e.tokensBefore,
				details: safe(e.details),
				fromHook: e.fromHook ?? null,
			},
			summaryFiles: witness,
		});
		return afterThisMillisecond();
	});

	pi.on("session_compact_failed", (event) => {
		log("session_compact_failed", {
			reason: event.reason,
			errorMessage: event.errorMessage ?? null,
			aborted: event.aborted,
			willRetry: event.willRetry,
			fromExtension: event.fromExtension,
		});
	});

	pi.on("session_shutdown", (event) => {
		log("session_shutdown", { reason: event.reason, targetSessionFile: event.targetSessionFile ?? null });
	});

	pi.on("model_select", (event) => {
		log("model_select", {
			source: event.source,
			model: modelName(event.model),
			contextWindow: event.model?.contextWindow ?? null,
			previousModel: modelName(event.previousModel),
		});
	});

	pi.on("input", (event) => {
		log("input", { text: event.text, source: event.source, streamingBehavior: event.streamingBehavior ?? null });
		return undefined;
	});

	pi.on("agent_start", () => {
		log("agent_start");
	});

	pi.on("agent_end", (event) => {
		log("agent_end", { messages: event.messages.length });
	});

	pi.on("agent_settled", (event) => {
		log("agent_settled", { aborted: event.aborted });
	});

	if (turnEvents) {
		pi.on("turn_start", (event) => {
			log("turn_start", { turnIndex: event.turnIndex });
		});
		pi.on("turn_end", (event) => {
			log("turn_end", { turnIndex: event.turnIndex });
			return undefined;
		});
	}

	pi.registerCommand("harness-new-session", {
		description: "Pi Continuity Harness: start a new session (ctx.newSession())",
		handler: async (args, ctx) => {
			const parentSession = args.trim();
			const result = await ctx.newSession(parentSession ? { parentSession } : undefined);
			// This instance is stale now and the new one has logged since: continue after its lines.
			seq = lineCount();
			log("harness_new_session", { cancelled: result.cancelled });
		},
	});

	pi.registerCommand("harness-switch-session", {
		description: "Pi Continuity Harness: resume a session file (ctx.switchSession())",
		handler: async (args, ctx) => {
			let fields: Json;
			try {
				const result = await ctx.switchSession(args.trim());
				fields = { cancelled: result.cancelled };
			} catch (error) {
				fields = { error: error instanceof Error ? error.message : String(error) };
			}
			seq = lineCount();
			log("harness_switch_session", fields);
		},
	});

	pi.registerCommand("harness-fork", {
		description: "Pi Continuity Harness: fork or clone the session (ctx.fork(entryId, {position}))",
		handler: async (args, ctx) => {
			const [position, entryId] = args.trim().split(/\s+/, 2);
			let fields: Json;
			try {
				const result = await ctx.fork(entryId ?? "", { position: position === "at" ? "at" : "before" });
				fields = { cancelled: result.cancelled };
			} catch (error) {
				fields = { error: error instanceof Error ? error.message : String(error) };
			}
			seq = lineCount();
			log("harness_fork", fields);
		},
	});

	pi.on("session_tree", (event) => {
		log("session_tree", {
			newLeafId: event.newLeafId ?? null,
			oldLeafId: event.oldLeafId ?? null,
			fromExtension: event.fromExtension ?? null,
		});
	});

	pi.registerCommand("harness-tree", {
		description: "Pi Continuity Harness: navigate the session tree (ctx.navigateTree(entryId))",
		handler: async (args, ctx) => {
			const targetId = args.trim();
			const oldLeafId = ctx.sessionManager.getLeafId();
			let fields: Json;
			try {
				const result = await ctx.navigateTree(targetId);
				fields = { cancelled: result.cancelled };
			} catch (error) {
				fields = { error: error instanceof Error ? error.message : String(error) };
			}
			log("tree_navigation", { targetId, oldLeafId, newLeafId: ctx.sessionManager.getLeafId(), ...fields });
		},
	});

	pi.registerCommand("harness-reload", {
		description: "Pi Continuity Harness: reload the runtime (ctx.reload())",
		handler: async (_args, ctx) => {
			log("harness_reload");
			await ctx.reload();
		},
	});
}
