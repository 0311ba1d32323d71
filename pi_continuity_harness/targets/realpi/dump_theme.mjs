/**
 * Print, as JSON, how Pi 1.6's `ctx.ui.theme.fg(token, text)` wraps a text for every foreground
 * token of the theme an RPC (or print/json) process uses: `initTheme(settings.theme)` runs in every
 * mode (dist/main.js:814) and, with no theme set, loads the `system` theme, which, with no colours
 * reported by a terminal (only the interactive mode asks one), is the indexed palette
 * (dist/modes/interactive/theme/system-theme.js, `indexedColors`). Each token maps to the escape
 * sequence before the text and the one after it (`Theme.fg`, theme.js:202-207).
 *
 * Usage: node dump_theme.mjs <pi-coding-agent package dir>
 *
 * The simulator's `simulator/pi-1.6-rpc-theme.json` holds this output under "fg"; `tests/realpi`
 * checks it against the installed package.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const [pkg] = process.argv.slice(2);
const themes = await import(pathToFileURL(path.join(pkg, "dist/modes/interactive/theme/theme.js")).href);
themes.initTheme(undefined, false);
const out = {};
for (const token of [...themes.theme.fgAnsi.keys()].sort()) {
	const [open, close] = themes.theme.fg(token, "\u0000").split("\u0000");
	out[token] = [open, close];
}
process.stdout.write(JSON.stringify(out));
