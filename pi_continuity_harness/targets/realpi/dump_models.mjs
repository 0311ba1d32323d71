/**
 * Print, as JSON, Pi 1.6's built-in model catalogue as `ctx.modelRegistry.getAll()` lists it before
 * models.json's providers: `ModelRuntime.create` (dist/core/model-runtime.js:79-117) wraps pi-ai's
 * `builtinProviders()` (model-runtime.js:88-96) and `rebuildProviders` sets them in
 * `providerIds()` order, built-ins first (model-runtime.js:134-142, 174-179); `getAll()` is
 * `runtime.getModels()` (dist/core/model-registry.js:18-20). The runtime is made offline with no
 * models.json and an empty store, as the harness's clean environment has no catalogue cache.
 * Each model keeps the fields the bridge's `modelToWire` carries, as
 * `[provider, id, name, api, reasoning, input, contextWindow, maxTokens]`.
 *
 * Usage: node dump_models.mjs <pi-coding-agent package dir>
 *
 * The simulator's `simulator/pi-1.6-models.json` is this output; `tests/realpi` checks it against
 * the installed package.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const [pkg] = process.argv.slice(2);
process.env.PI_OFFLINE = "1";
const runtimeModule = await import(pathToFileURL(path.join(pkg, "dist/core/model-runtime.js")).href);
const runtime = await runtimeModule.ModelRuntime.create({
	modelsPath: null,
	credentials: undefined,
	allowModelNetwork: false,
	refreshOnCreate: false,
});
const out = runtime.getModels().map((model) => [
	model.provider,
	model.id,
	model.name ?? model.id,
	model.api,
	Boolean(model.reasoning),
	model.input ?? ["text"],
	model.contextWindow,
	model.maxTokens,
]);
process.stdout.write(JSON.stringify(out));
