/**
 * A blitz handoff "implementation" with a planted bug, for the real-Pi explorer's own test.
 *
 * After every agent run it saves handoff settings that break the settings table's constraints
 * (a warning percent above the critical one), so only a run with a prompt breaks
 * `settings_file_valid`: exploration must find one and shrink the case to it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
	pi.on("agent_end", () => {
		const dir = path.join(process.env.PI_CODING_AGENT_DIR ?? ".", "pi-blitz-handoff");
		fs.mkdirSync(dir, { recursive: true });
		const settings = { contextWarningPercent: 95, criticalWarningPercent: 90 };
		fs.writeFileSync(path.join(dir, "config.json"), `${JSON.stringify(settings)}\n`);
	});
}
