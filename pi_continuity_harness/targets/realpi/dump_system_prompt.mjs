/**
 * Print, as JSON, the system message Pi 1.6 persists before the first request of a session with
 * the four built-in tools: its prompt `sections` (Pi's own `buildSystemPromptSections`) and its
 * `toolsAdded` (the tools' `toToolDeclaration`: name, description, JSON schema,
 * constrainedSampling).
 *
 * Usage: node dump_system_prompt.mjs <pi-coding-agent package dir> <cwd>
 *
 * The simulator's `simulator/pi-1.6-system-prompt.json` is this output with the package
 * directory written `$PI_PACKAGE` and the cwd `$CWD`; `tests/realpi` checks it against the
 * installed package.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const [pkg, cwd] = process.argv.slice(2);
const load = (relative) => import(pathToFileURL(path.join(pkg, relative)).href);
const index = await load("dist/index.js");
const prompt = await load("dist/core/system-prompt.js");
let ai;
try {
	ai = await load("node_modules/@earendil-works/pi-ai/dist/index.js");
} catch {
	ai = await load("../pi-ai/dist/index.js");
}
const definitions = [
	index.createReadToolDefinition(cwd),
	index.createBashToolDefinition(cwd),
	index.createEditToolDefinition(cwd),
	index.createWriteToolDefinition(cwd),
];
const sections = prompt.buildSystemPromptSections({
	cwd,
	selectedTools: definitions.map((d) => d.name),
	toolSnippets: Object.fromEntries(definitions.map((d) => [d.name, d.promptSnippet])),
	toolGuidelines: Object.fromEntries(definitions.map((d) => [d.name, d.promptGuidelines ?? []])),
});
// All eight built-in tools Pi registers (createAllToolDefinitions, core/tools/index.js:89-100),
// active or not: what `pi.setActiveTools` can activate and `pi.getAllTools` lists.
const tools = await load("dist/core/tools/index.js");
const builtinTools = Object.values(tools.createAllToolDefinitions(cwd)).map((d) => ({
	declaration: ai.toToolDeclaration(d),
	promptSnippet: d.promptSnippet ?? null,
	promptGuidelines: d.promptGuidelines ?? null,
}));
process.stdout.write(
	JSON.stringify({ sections, toolsAdded: definitions.map((d) => ai.toToolDeclaration(d)), builtinTools }) + "\n",
);
