// npm test: the manifest names an entry that exists (no Pi, no Python needed).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

test("pi.extensions names existing files", () => {
	for (const entry of manifest.pi.extensions) assert.ok(existsSync(new URL(`../${entry}`, import.meta.url)), entry);
});

test("host packages are wildcard peers", () => {
	for (const range of Object.values(manifest.peerDependencies)) assert.equal(range, "*");
});
