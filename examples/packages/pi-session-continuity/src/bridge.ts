/**
 * Pi Continuity Harness bridge: hosts a Python extension inside a real Pi 1.6 process.
 *
 * A generated wrapper per extension slot does
 *     import { createBridge } from "<this file>";
 *     export default createBridge({ spec: "module:factory", slot: "impl" });
 * Pi calls that factory like any extension factory. It spawns (once per Pi process and slot;
 * kept on globalThis so reload/new-session instances reuse it)
 *     $PI_HARNESS_PYTHON -m pi_continuity_harness.targets.realpi.bridge_runtime --extension <spec>
 * (through a bridge zygote's client when $PI_HARNESS_BRIDGE_ZYGOTE names one: bridge_zygote.py)
 * and talks JSON lines over its stdin/stdout (stderr is Pi's stderr). Each factory call is
 * one extension *instance*: Python runs the Python factory again against a fresh API object,
 * marks the previous instance stale, and reports what it registered; this side registers one
 * Pi handler per Python handler (so Pi's own dispatch rules apply per handler), and the
 * commands and tools.
 *
 * Messages this side -> Python (requests carry "id"; Python answers {"type":"result"|"error","id"}):
 *   {type:"load", id, inst}                                      -> {handlers:[[event,idx]], commands:[[name,desc]], tools:[...], flags:[[name,options]]}
 *   {type:"event", id, inst, handler, event, ctx}                -> handler result (undefined: {"undefined":true})
 *   {type:"command", id, inst, name, args, ctx}                  -> null
 *   {type:"tool", id, inst, name, toolCallId, params, signal, ctx} -> {content, details, isError}
 *   {type:"callback", id, callback, ctx}                         -> null (withSession of newSession)
 *   {type:"reply", id, value | error, kind}                      answer to a Python "call"; kind: stale |
 *                                                                notInitialized | error (Pi's API threw) | bridge
 *   {type:"abort", signal, reason}                               a Pi AbortSignal fired
 *   {type:"compact_done", callback, result | error}              ctx.compact() finished
 * Messages Python -> this side:
 *   {type:"call", id, inst, ctx, target, method, args, noreply?} target: pi | ctx | ui | sm | registry
 *   {type:"register", inst, kind:"handler"|"command"|"tool", ...} registration after load
 *   {type:"abort_signal", signal}                                a Python-made signal passed to complete() fired
 * Signals travel as {"$signal": id, aborted, py?}; ctx as {id, inst, kind, mode, hasUI, cwd}.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { CONFIG_DIR_NAME } from "@earendil-works/pi-coding-agent";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

// Pi's API objects are used dynamically here (methods are chosen by name at run time).
// biome-ignore lint/suspicious/noExplicitAny: dynamic bridge
type Any = any;
type Json = Record<string, Any>;

export interface BridgeOptions {
	/** `module:factory` (or an entry-point name) of the Python extension. */
	spec: string;
	/** Unique per `-e` slot: one Python process per slot and Pi process. */
	slot: string;
	/** JSON file with the filesystem fault plan for this process (optional). */
	faults?: string;
}

const REGISTRY_KEY = Symbol.for("pi-continuity-harness.python-bridges");
const CTX_LIMIT = 2000;

function errorMessage(error: unknown): string {
	if (error instanceof Error) return error.message;
	return String(error);
}

/** A reply whose value held a NaN or an infinity carries `"$nonfinite": true`, each such number
 * as `{"$nonfinite": "NaN" | "Infinity" | "-Infinity"}` (api/wire_json.py reply_line): no JSON
 * text holds them, and Pi gets the numbers, as from a JavaScript extension's handler. The
 * value's own keys `$nonfinite`, `$$nonfinite`, ... come with one more `$`, taken off here. */
const NONFINITE = "$nonfinite";
const ESCAPED = /^\$\$+nonfinite$/;

function reviveNonFinite(value: Any): Any {
	if (Array.isArray(value)) return value.map(reviveNonFinite);
	if (value === null || typeof value !== "object") return value;
	const keys = Object.keys(value);
	if (keys.length === 1 && keys[0] === NONFINITE && typeof value[NONFINITE] === "string") return Number(value[NONFINITE]);
	const out: Json = {};
	for (const key of keys) {
		if (key === NONFINITE && value[key] === true) continue;
		// A user's own `$nonfinite` key came with one more `$` (wire_json.py _mark_nonfinite).
		out[ESCAPED.test(key) ? key.slice(1) : key] = reviveNonFinite(value[key]);
	}
	return out;
}

/** An error of the bridge's own (a call it cannot make, Pi or Python gone, a Python callback
 * that raised), not one Pi's API threw: its reply's kind is "bridge", so Python does not raise
 * it as Pi's Error (PiError). */
class BridgeError extends Error {}

function errorKind(error: unknown, message: string): string {
	if (message.includes("is stale")) return "stale";
	if (message.includes("not initialized")) return "notInitialized";
	if (error instanceof BridgeError) return "bridge";
	return "error";
}

function modelToWire(model: Any): Json | null {
	if (!model) return null;
	return {
		provider: model.provider,
		id: model.id,
		name: model.name ?? model.id,
		api: model.api,
		reasoning: Boolean(model.reasoning),
		input: model.input ?? ["text"],
		contextWindow: model.contextWindow,
		maxTokens: model.maxTokens,
	};
}

interface Pending {
	resolve: (value: Any) => void;
	reject: (error: Error) => void;
}

interface CtxEntry {
	ctx: Any;
	inst: number;
	kind: string;
}

class Instance {
	latestCtx: Any = undefined;
	latestCommandCtx: Any = undefined;
	constructor(
		readonly id: number,
		readonly pi: ExtensionAPI,
	) {}
}

class PythonBridge {
	private readonly child: ChildProcess;
	private nextId = 1;
	private nextInstance = 1;
	private nextCtx = 1;
	private nextSignal = 1;
	private readonly pending = new Map<string, Pending>();
	private readonly instances = new Map<number, Instance>();
	private readonly ctxs = new Map<string, CtxEntry>();
	private readonly signals = new Map<string, AbortSignal>();
	private readonly signalIds = new WeakMap<AbortSignal, string>();
	private readonly pyControllers = new Map<string, AbortController>();
	private buffer = "";
	exited: string | undefined;

	constructor(readonly options: BridgeOptions) {
		const python = process.env.PI_HARNESS_PYTHON || "python3";
		const args = [
			"-m",
			"pi_continuity_harness.targets.realpi.bridge_runtime",
			"--extension",
			options.spec,
			"--config-dir-name",
			CONFIG_DIR_NAME,
		];
		if (options.faults) args.push("--faults", options.faults);
		// A bridge zygote (targets/realpi/bridge_zygote.py) forks an already imported bridge for
		// this process: its client (stdlib only) hands it these pipes and stands in for it here.
		const zygote = process.env.PI_HARNESS_BRIDGE_ZYGOTE;
		if (zygote) {
			const { client, socket } = JSON.parse(zygote) as { client: string; socket: string };
			args.unshift("-I", "-S", client, socket);
		}
		this.child = spawn(python, args, { stdio: ["pipe", "pipe", "inherit"], cwd: process.cwd(), env: process.env });
		this.child.stdout?.setEncoding("utf8");
		this.child.stdout?.on("data", (chunk: string) => this.onData(chunk));
		this.child.stdin?.on("error", () => {
			// EPIPE after Python died: reported through "exit".
		});
		this.child.on("error", (error) => this.onExit(`cannot start ${python}: ${errorMessage(error)}`));
		this.child.on("exit", (code, signal) => this.onExit(`Python bridge exited (${signal ?? code})`));
	}

	// ------------------------------------------------------------------ transport
	private onExit(reason: string): void {
		if (this.exited) return;
		this.exited = reason;
		for (const pending of this.pending.values()) pending.reject(new BridgeError(reason));
		this.pending.clear();
	}

	private onData(chunk: string): void {
		this.buffer += chunk;
		let newline = this.buffer.indexOf("\n");
		while (newline !== -1) {
			const line = this.buffer.slice(0, newline);
			this.buffer = this.buffer.slice(newline + 1);
			if (line.trim()) {
				let message: Json | undefined;
				try {
					message = JSON.parse(line);
				} catch {
					process.stderr.write(`[harness bridge] unparsable line from Python: ${line.slice(0, 200)}\n`);
				}
				if (message) this.onMessage(message);
			}
			newline = this.buffer.indexOf("\n");
		}
	}

	private replacer = (_key: string, value: Any): Any => {
		if (value instanceof AbortSignal) return this.signalRef(value);
		if (value instanceof Set) return [...value].sort();
		if (value instanceof Map) return Object.fromEntries(value);
		if (typeof value === "bigint") return Number(value);
		if (typeof value === "function") return undefined;
		return value;
	};

	private serialize(message: Json): string {
		try {
			return JSON.stringify(message, this.replacer);
		} catch {
			// Cycles: drop repeated objects (rare; only when a payload is not plain data).
			const seen = new WeakSet<object>();
			return JSON.stringify(message, (key, value) => {
				const replaced = this.replacer(key, value);
				if (replaced && typeof replaced === "object") {
					if (seen.has(replaced)) return undefined;
					seen.add(replaced);
				}
				return replaced;
			});
		}
	}

	send(message: Json): void {
		if (this.exited) return;
		this.child.stdin?.write(`${this.serialize(message)}\n`);
	}

	request(message: Json): Promise<Any> {
		if (this.exited) return Promise.reject(new BridgeError(this.exited));
		const id = `t${this.nextId++}`;
		return new Promise((resolve, reject) => {
			this.pending.set(id, {
				resolve: (value: Any) => {
					this.pending.delete(id);
					this.publishBusy();
					resolve(value);
				},
				reject: (error: Any) => {
					this.pending.delete(id);
					this.publishBusy();
					reject(error);
				},
			});
			this.publishBusy();
			this.send({ ...message, id });
		});
	}

	/** How many requests Python is still working on, for the harness's idle check: Pi shows
	 * no RPC event while an extension command switches sessions ($PI_HARNESS_BRIDGE_STATE).
	 * Written to a temporary file and renamed into place: writeFileSync truncates first, and a
	 * harness reading the truncated file would take "" for 0 and stop waiting too early.
	 * Each slot (one Python process) has its own file, `<state>.<slot>`, which the harness adds
	 * up: with one shared file, a second bridged extension finishing its handler wrote 0 while
	 * the first was still switching sessions (a held session_before_switch handler). */
	private publishBusy(): void {
		const base = process.env.PI_HARNESS_BRIDGE_STATE;
		if (!base) return;
		const path = `${base}.${this.options.slot}`;
		try {
			writeFileSync(`${path}.tmp`, String(this.pending.size), "utf8");
			renameSync(`${path}.tmp`, path);
		} catch {
			// best effort: the harness then falls back to its quiet window
		}
	}

	// ------------------------------------------------------------------ references
	signalRef(signal: AbortSignal | undefined | null): Json | null {
		if (!signal) return null;
		let id = this.signalIds.get(signal);
		if (!id) {
			id = `s${this.nextSignal++}`;
			const sid = id;
			this.signalIds.set(signal, id);
			this.signals.set(id, signal);
			if (!signal.aborted) {
				signal.addEventListener(
					"abort",
					() => this.send({ type: "abort", signal: sid, reason: errorMessage(signal.reason ?? "aborted") }),
					{ once: true },
				);
			}
		}
		return { $signal: id, aborted: signal.aborted };
	}

	resolveSignal(ref: Any): AbortSignal | undefined {
		if (!ref || typeof ref !== "object" || !ref.$signal) return undefined;
		const id = String(ref.$signal);
		if (!ref.py) return this.signals.get(id);
		let controller = this.pyControllers.get(id);
		if (!controller) {
			controller = new AbortController();
			this.pyControllers.set(id, controller);
		}
		if (ref.aborted && !controller.signal.aborted) controller.abort();
		return controller.signal;
	}

	ctxRef(ctx: Any, inst: Instance, kind: string): Json {
		const id = `c${this.nextCtx++}`;
		this.ctxs.set(id, { ctx, inst: inst.id, kind });
		if (this.ctxs.size > CTX_LIMIT) {
			const oldest = this.ctxs.keys().next().value;
			if (oldest !== undefined) this.ctxs.delete(oldest);
		}
		if (kind === "command") inst.latestCommandCtx = ctx;
		else if (kind !== "replaced") inst.latestCtx = ctx;
		const info: Json = { id, inst: inst.id, kind };
		try {
			info.mode = ctx.mode;
			info.hasUI = ctx.hasUI;
			info.cwd = ctx.cwd;
		} catch {
			// a stale ctx: Python finds out on first use
		}
		return info;
	}

	private lookupCtx(id: Any, instId: Any): CtxEntry | undefined {
		const entry = typeof id === "string" ? this.ctxs.get(id) : undefined;
		if (entry) return entry;
		const inst = this.instances.get(Number(instId));
		const ctx = inst?.latestCommandCtx ?? inst?.latestCtx;
		return ctx && inst ? { ctx, inst: inst.id, kind: "fallback" } : undefined;
	}

	// ------------------------------------------------------------------ instances
	async load(pi: ExtensionAPI): Promise<void> {
		const inst = new Instance(this.nextInstance++, pi);
		this.instances.set(inst.id, inst);
		const reply: Json = await this.request({ type: "load", inst: inst.id });
		const loaded: Json = reply.value ?? {};
		for (const [event, index] of loaded.handlers ?? []) this.registerHandler(inst, String(event), Number(index));
		for (const [name, description] of loaded.commands ?? []) this.registerCommand(inst, String(name), description);
		for (const tool of loaded.tools ?? []) this.registerTool(inst, tool);
		// Still inside Pi's factory call: the defaults are pending until it returns (loader.js:274-278).
		for (const [name, options] of loaded.flags ?? []) pi.registerFlag(String(name), options);
	}

	private registerHandler(inst: Instance, event: string, index: number): void {
		const omit = event === "turn_end" || event === "agent_before_settle" ? ["context"] : [];
		inst.pi.on(event as Any, async (payload: Any, ctx: Any) => {
			const wire: Json = {};
			for (const [key, value] of Object.entries(payload ?? {})) if (!omit.includes(key)) wire[key] = value;
			if (event === "message_update" && wire.assistantMessageEvent?.partial) {
				// `partial` repeats `message`; sending it twice doubles the cost of every delta.
				const { partial: _partial, ...delta } = wire.assistantMessageEvent;
				wire.assistantMessageEvent = delta;
			}
			const reply: Json = await this.request({
				type: "event",
				inst: inst.id,
				handler: index,
				event: wire,
				ctx: this.ctxRef(ctx, inst, "event"),
			});
			return reply.undefined ? undefined : reply.value;
		});
	}

	private registerCommand(inst: Instance, name: string, description: Any): void {
		inst.pi.registerCommand(name, {
			description: typeof description === "string" ? description : undefined,
			handler: async (args: string, ctx: Any) => {
				await this.request({ type: "command", inst: inst.id, name, args, ctx: this.ctxRef(ctx, inst, "command") });
			},
		});
	}

	private registerTool(inst: Instance, tool: Json): void {
		inst.pi.registerTool({
			name: tool.name,
			label: tool.label ?? tool.name,
			description: tool.description ?? "",
			parameters: tool.parameters ?? { type: "object", properties: {} },
			promptSnippet: tool.promptSnippet ?? undefined,
			execute: async (toolCallId: string, params: Any, signal: AbortSignal | undefined, _onUpdate: Any, ctx: Any) => {
				const reply: Json = await this.request({
					type: "tool",
					inst: inst.id,
					name: tool.name,
					toolCallId,
					params,
					signal: this.signalRef(signal),
					ctx: this.ctxRef(ctx, inst, "tool"),
				});
				const result: Json = reply.value ?? {};
				if (result.isError) {
					const text = (result.content ?? []).map((b: Any) => b?.text ?? "").join("");
					throw new Error(text || "tool failed");
				}
				// `terminate: true` ends the batch when every call of it says so (pi-agent-core
				// agent-loop.js:462-463, `=== true`); the bridge used to drop it.
				return { content: result.content ?? [], details: result.details, ...(result.terminate === true ? { terminate: true } : {}) };
			},
		} as Any);
	}

	// ------------------------------------------------------------------ messages from Python
	private onMessage(message: Json): void {
		switch (message.type) {
			case "result":
			case "error": {
				const pending = this.pending.get(String(message.id));
				if (!pending) return;
				this.pending.delete(String(message.id));
				if (message.type === "error") pending.reject(new BridgeError(String(message.error)));
				else pending.resolve(message[NONFINITE] === true ? reviveNonFinite(message) : message);
				return;
			}
			case "call":
				void this.handleCall(message);
				return;
			case "register": {
				const inst = this.instances.get(Number(message.inst));
				if (!inst) return;
				try {
					if (message.kind === "handler") this.registerHandler(inst, String(message.event), Number(message.index));
					else if (message.kind === "command") this.registerCommand(inst, String(message.name), message.description);
					else if (message.kind === "tool") this.registerTool(inst, message.tool);
				} catch (error) {
					process.stderr.write(`[harness bridge] late registration failed: ${errorMessage(error)}\n`);
				}
				return;
			}
			case "abort_signal": {
				const id = String(message.signal);
				let controller = this.pyControllers.get(id);
				if (!controller) {
					controller = new AbortController();
					this.pyControllers.set(id, controller);
				}
				controller.abort();
				return;
			}
			default:
				process.stderr.write(`[harness bridge] unknown message from Python: ${String(message.type)}\n`);
		}
	}

	private async handleCall(message: Json): Promise<void> {
		let value: Any;
		let failure: string | undefined;
		let kind = "error";
		try {
			// perform() runs synchronously up to its first await, so fire-and-forget calls keep their order.
			value = await this.perform(message);
		} catch (error) {
			failure = errorMessage(error);
			kind = errorKind(error, failure);
		}
		if (message.noreply) {
			if (failure !== undefined) {
				process.stderr.write(`[harness bridge] ${message.target}.${message.method} failed: ${failure}\n`);
			}
			return;
		}
		if (failure !== undefined) this.send({ type: "reply", id: message.id, error: failure, kind });
		else this.send({ type: "reply", id: message.id, value: value ?? null, undefined: value === undefined });
	}

	/** The model a Python extension hands Pi (its fields, `wire.model_to_wire`) as a TypeScript
	 * extension's object would reach Pi: Pi looks none up (`pi.setModel` checks the provider's
	 * auth and sets the object it gets, agent-session.js:2911-2915, 2119-2136;
	 * `hasConfiguredAuth` and `complete` take it as given, model-registry.js:31-32, 77-78). The
	 * registry's own object when the fields are that model's; else the fields over the registry's
	 * model of that id, or over the provider's first model (its baseUrl, headers, compat, cost:
	 * what `{...model, id: "other"}` keeps), or alone for a provider the registry does not know. */
	private modelFor(ctx: Any, wire: Any): Any {
		const registry: Any = ctx.modelRegistry;
		const provider = String(wire?.provider);
		const found = registry.find(provider, String(wire?.id));
		const fields: Json = {};
		for (const key of ["provider", "id", "name", "api", "reasoning", "input", "contextWindow", "maxTokens"]) {
			if (wire && typeof wire === "object" && key in wire) fields[key] = wire[key];
		}
		if (found && JSON.stringify(modelToWire(found)) === JSON.stringify(modelToWire({ ...found, ...fields }))) {
			return found;
		}
		const base = found ?? registry.getAll().find((model: Any) => model.provider === provider);
		return { ...(base ?? {}), ...fields };
	}

	private async perform(message: Json): Promise<Any> {
		const args: Any[] = Array.isArray(message.args) ? message.args : [];
		const target = String(message.target);
		const method = String(message.method);
		if (target === "pi") {
			const inst = this.instances.get(Number(message.inst));
			if (!inst) throw new BridgeError(`unknown extension instance ${message.inst}`);
			return this.performPi(inst, method, args);
		}
		const entry = this.lookupCtx(message.ctx, message.inst);
		if (!entry) throw new BridgeError("no extension context is available yet");
		const ctx = entry.ctx;
		switch (target) {
			case "ctx":
				return this.performCtx(ctx, entry, method, args);
			case "ui":
				return this.performUi(ctx.ui, method, args);
			case "sm": {
				const manager: Any = ctx.sessionManager;
				if (typeof manager[method] !== "function") throw new BridgeError(`sessionManager.${method} is not available`);
				return manager[method](...args);
			}
			case "registry":
				return this.performRegistry(ctx, method, args);
			default:
				throw new BridgeError(`unknown call target ${target}`);
		}
	}

	private async performPi(inst: Instance, method: string, args: Any[]): Promise<Any> {
		const pi: Any = inst.pi;
		switch (method) {
			case "sendMessage":
				return pi.sendMessage(args[0], args[1] ?? undefined);
			case "sendUserMessage":
				return pi.sendUserMessage(args[0], args[1] ?? undefined);
			case "appendEntry":
				return pi.appendEntry(args[0], args[1] ?? undefined);
			case "setLabel":
				// A Python None is `undefined`: the label entry has no `label` key.
				return pi.setLabel(args[0], args[1] ?? undefined);
			case "setSessionName":
			case "getSessionName":
			case "getActiveTools":
			case "setActiveTools":
			case "getSettings":
			case "getThinkingLevel":
			case "setThinkingLevel":
			case "registerFlag":
			case "getFlag":
				return pi[method](...args);
			case "getAllTools":
				// ToolInfo (types.d.ts:1622-1627): plain data but for `reachesTools`, a function
				// no Python tool has (JSON drops it).
				return pi.getAllTools();
			case "getCommands": {
				// SlashCommandInfo (slash-commands.d.ts:3-8): plain data. The harness's observer
				// (targets/realpi/observer.ts, loaded first) registers its own harness-* commands,
				// which plain Pi would not list: they are left out by their extension's path,
				// $PI_HARNESS_OBSERVER (environment.py), so both targets answer what Pi would
				// without the instrument.
				const observer = process.env.PI_HARNESS_OBSERVER;
				const commands: Any[] = pi.getCommands();
				return observer ? commands.filter((c) => c.sourceInfo?.path !== observer) : commands;
			}
			case "setModel": {
				const ctx = inst.latestCommandCtx ?? inst.latestCtx;
				if (!ctx) throw new BridgeError("setModel needs a context (call it from a handler or command)");
				return await pi.setModel(this.modelFor(ctx, args[0]));
			}
			default:
				throw new BridgeError(`pi.${method} is not bridged`);
		}
	}

	private async performCtx(ctx: Any, entry: CtxEntry, method: string, args: Any[]): Promise<Any> {
		switch (method) {
			case "model":
				return modelToWire(ctx.model);
			case "signal":
				return this.signalRef(ctx.signal);
			case "thinkingLevel":
				// A live getter (runner.js:663-666), read at the call.
				return ctx.thinkingLevel;
			case "isIdle":
			case "isProjectTrusted":
			case "hasPendingMessages":
			case "getContextUsage":
			case "getSystemPrompt":
			case "abort":
			case "shutdown":
				return ctx[method]();
			case "compact": {
				const callback = args[1];
				ctx.compact({
					customInstructions: args[0] ?? undefined,
					onComplete: (result: Any) => this.send({ type: "compact_done", callback, result }),
					onError: (error: Any) => this.send({ type: "compact_done", callback, error: errorMessage(error) }),
				});
				return undefined;
			}
			case "executeTool": {
				// ExtensionToolContext.executeTool (types.d.ts:291-300, runner.js:719-733): a tool's
				// ctx only. The outcome is JSON: `onUpdate` (a function) cannot come from Python.
				if (typeof ctx.executeTool !== "function") throw new BridgeError("ctx.executeTool is not available");
				const signal = this.resolveSignal(args[2]);
				return await ctx.executeTool(String(args[0]), args[1] ?? undefined, signal ? { signal } : {});
			}
			case "waitForIdle":
				return await ctx.waitForIdle();
			case "sendUserMessage":
				// ReplacedSessionContext (withSession): resolves when the run it starts settles.
				return await ctx.sendUserMessage(args[0], args[1] ?? undefined);
			case "sendMessage":
				return await ctx.sendMessage(args[0], args[1] ?? undefined);
			case "reload":
				return await ctx.reload();
			case "navigateTree":
				// Every mode resolves to `{ cancelled }` (rpc-mode.js:259-267).
				return await ctx.navigateTree(String(args[0]), args[1] ?? undefined);
			case "newSession": {
				const inst = this.instances.get(entry.inst);
				const callback = args[1];
				const options: Json = {};
				if (args[0]) options.parentSession = args[0];
				if (callback && inst) {
					options.withSession = async (replaced: Any) => {
						await this.request({ type: "callback", callback, ctx: this.ctxRef(replaced, inst, "replaced") });
					};
				}
				return await ctx.newSession(options);
			}
			case "fork":
			case "switchSession": {
				// ExtensionCommandContext.fork / switchSession (types.d.ts:320-340): the last
				// argument is the withSession callback's id, as for newSession.
				const inst = this.instances.get(entry.inst);
				const callback = args[args.length - 1];
				const options: Json = {};
				if (method === "fork") options.position = args[1] === "at" ? "at" : "before";
				if (callback && inst) {
					options.withSession = async (replaced: Any) => {
						await this.request({ type: "callback", callback, ctx: this.ctxRef(replaced, inst, "replaced") });
					};
				}
				return await ctx[method](String(args[0]), options);
			}
			default:
				throw new BridgeError(`ctx.${method} is not bridged`);
		}
	}

	private async performUi(ui: Any, method: string, args: Any[]): Promise<Any> {
		const timeout = (value: Any): Json | undefined =>
			typeof value === "number" ? { timeout: value } : undefined;
		switch (method) {
			case "notify":
				return ui.notify(args[0], args[1]);
			case "setStatus":
				return ui.setStatus(args[0], args[1] ?? undefined);
			case "setWidget":
				return ui.setWidget(args[0], args[1] ?? undefined, args[2] ? { placement: args[2] } : undefined);
			case "themeFg":
				return ui.theme.fg(String(args[0]), String(args[1]));
			case "select":
				return await ui.select(args[0], args[1], timeout(args[2]));
			case "confirm":
				return await ui.confirm(args[0], args[1], timeout(args[2]));
			case "input":
				return await ui.input(args[0], args[1] ?? undefined, timeout(args[2]));
			case "editor":
				return await ui.editor(args[0], args[1] ?? undefined);
			default:
				throw new BridgeError(`ui.${method} is not bridged`);
		}
	}

	private async performRegistry(ctx: Any, method: string, args: Any[]): Promise<Any> {
		const registry: Any = ctx.modelRegistry;
		switch (method) {
			case "find":
				return modelToWire(registry.find(String(args[0]), String(args[1])));
			case "getAll":
				return registry.getAll().map(modelToWire);
			case "getAvailable":
				return registry.getAvailable().map(modelToWire);
			case "hasConfiguredAuth":
				return registry.hasConfiguredAuth(this.modelFor(ctx, args[0]));
			case "complete": {
				const model = this.modelFor(ctx, args[0]);
				const options: Json = {};
				if (typeof args[2] === "number") options.maxTokens = args[2];
				const signal = this.resolveSignal(args[3]);
				if (signal) options.signal = signal;
				if (args[4]) {
					options.reasoning = args[4];
					return await registry.streamSimple(model, args[1], options).result();
				}
				return await registry.complete(model, args[1], options);
			}
			default:
				throw new BridgeError(`modelRegistry.${method} is not bridged`);
		}
	}
}

function bridgeFor(options: BridgeOptions): PythonBridge {
	const registry: Map<string, PythonBridge> = ((globalThis as Any)[REGISTRY_KEY] ??= new Map());
	let bridge = registry.get(options.slot);
	if (!bridge || bridge.exited) {
		bridge = new PythonBridge(options);
		registry.set(options.slot, bridge);
	}
	return bridge;
}

/** The Pi extension factory that hosts the Python extension `options.spec`. */
export function createBridge(options: BridgeOptions): (pi: ExtensionAPI) => Promise<void> {
	return async (pi: ExtensionAPI): Promise<void> => {
		await bridgeFor(options).load(pi);
	};
}
