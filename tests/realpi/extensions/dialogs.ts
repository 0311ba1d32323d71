/**
 * Test extension: `/ask` opens confirm, select and input dialogs and reports the answers
 * with a notify and a status line.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
	pi.registerCommand("ask", {
		description: "open three dialogs",
		handler: async (args, ctx) => {
			const confirm = await ctx.ui.confirm("Harness", `Proceed with ${args || "nothing"}?`);
			const select = await ctx.ui.select("Pick a section", ["armed", "settings", "artifacts"]);
			const input = await ctx.ui.input("Trigger percent", "75");
			const answers = { confirm, select: select ?? null, input: input ?? null };
			ctx.ui.setStatus("harness", `answered ${answers.select ?? "-"}`);
			ctx.ui.notify(`Answers: ${JSON.stringify(answers)}`, "info");
		},
	});
}
