/**
 * Pi Session Continuity, as the Pi Continuity Harness ships it for its release-gate fixture.
 *
 * The product behaviour is the harness's Python reference implementation, hosted inside Pi by
 * the harness bridge (src/bridge.ts, a verbatim copy of
 * pi_continuity_harness/targets/realpi/bridge.ts). The bridge starts
 *     $PI_HARNESS_PYTHON -m pi_continuity_harness.targets.realpi.bridge_runtime --extension <spec>
 * so the installed package finds Python and the harness through the environment, exactly as the
 * harness's `-e` wrappers do: PI_HARNESS_PYTHON (default python3) and PYTHONPATH.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { PRODUCT_PREFIX } from "pi-continuity-fixture-dep";
import { createBridge } from "../../src/bridge.ts";

/** `module:factory` or an entry-point name of the Python extension (default: the reference). */
const spec = process.env.PI_HARNESS_EXTENSION_SPEC || "reference";
/** The harness's filesystem fault plan for this run (optional). */
const faults = process.env.PI_HARNESS_FS_PLAN || undefined;

const bridge = createBridge({ spec, slot: `package ${PRODUCT_PREFIX}`, ...(faults ? { faults } : {}) });

export default function sessionContinuity(pi: ExtensionAPI): Promise<void> {
	return bridge(pi);
}
