import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

// At every session_start: append a custom entry { reason, n } (n counts this instance's calls), so
// a test sees how often session_start ran and whether RPC streamed the entry_appended.
export default function (pi: ExtensionAPI): void {
	let n = 0;
	pi.on("session_start", (event) => {
		n += 1;
		pi.appendEntry("probe-start", { reason: event.reason, n });
	});
}
