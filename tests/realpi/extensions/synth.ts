/**
 * Test extension: `/synth` calls the current model through ctx.modelRegistry.complete() (no tools),
 * as a continuity extension synthesising a Brief would, and notifies the result as JSON.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
	pi.registerCommand("synth", {
		description: "one extension model call",
		handler: async (args, ctx) => {
			const model = ctx.model;
			if (!model) throw new Error("no model");
			const message = await ctx.modelRegistry.complete(
				model,
				{
					systemPrompt: "You write a Continuity Brief.",
					messages: [{ role: "user", content: [{ type: "text", text: `<transcript>${args}</transcript>` }], timestamp: Date.now() }],
				},
				{ maxTokens: 4000 },
			);
			const text = message.content
				.filter((block) => block.type === "text")
				.map((block) => (block as { text: string }).text)
				.join("");
			ctx.ui.notify(JSON.stringify({ stopReason: message.stopReason, text, usage: message.usage.totalTokens }), "info");
		},
	});
}
