#!/usr/bin/env node
/**
 * Static scan of Pi extension entry points with the TypeScript parser Pi itself loads extensions with:
 * jiti's bundled Babel (`<pi>/node_modules/jiti/dist/babel.cjs`, the `transform` jiti uses for .ts).
 * A Babel plugin's `pre()` hook sees the untransformed AST (before the TypeScript plugin strips
 * type-only imports), so it records every import, its kind (value/type), and the default export.
 *
 *   node ts_scan.cjs PI_PACKAGE_DIR PACKAGE_ROOT ENTRY...
 * prints JSON: {files: {rel: {imports: [{source, typeOnly, kind}], defaultExport, parseError}}, missing: [...]}
 * Relative imports are followed (the package's own module graph); bare imports are reported.
 */
const { createRequire } = require("node:module");
const fs = require("node:fs");
const path = require("node:path");

const [piDir, root, ...entries] = process.argv.slice(2);
const piRequire = createRequire(path.join(piDir, "package.json"));
const transform = piRequire(path.join(path.dirname(piRequire.resolve("jiti/package.json")), "dist", "babel.cjs"));

function walk(node, visit) {
	if (!node || typeof node !== "object") return;
	if (Array.isArray(node)) return node.forEach((n) => walk(n, visit));
	if (typeof node.type === "string") visit(node);
	for (const key of Object.keys(node)) {
		if (key === "loc" || key === "start" || key === "end" || key === "extra" || key === "comments") continue;
		walk(node[key], visit);
	}
}

function scan(file) {
	const source = fs.readFileSync(file, "utf8");
	const result = { imports: [], defaultExport: null, parseError: null };
	const plugin = () => ({
		pre(babelFile) {
			const program = babelFile.ast.program;
			const declared = new Map();
			for (const stmt of program.body) {
				if (stmt.type === "FunctionDeclaration" && stmt.id) declared.set(stmt.id.name, "function");
				if (stmt.type === "VariableDeclaration")
					for (const d of stmt.declarations)
						if (d.id.type === "Identifier") declared.set(d.id.name, d.init ? d.init.type : "undefined");
				if (stmt.type === "ExportDefaultDeclaration") {
					const d = stmt.declaration;
					let kind = d.type; // FunctionDeclaration | ArrowFunctionExpression | CallExpression | Identifier | ObjectExpression ...
					if (d.type === "Identifier") kind = `Identifier:${declared.get(d.name) ?? "unknown"}`;
					result.defaultExport = { kind, async: Boolean(d.async), params: d.params ? d.params.length : null, line: stmt.loc.start.line };
				}
				if (stmt.type === "ExportNamedDeclaration" && stmt.specifiers)
					for (const s of stmt.specifiers)
						if (s.exported && (s.exported.name === "default" || s.exported.value === "default"))
							result.defaultExport = { kind: `ExportSpecifier:${declared.get(s.local.name) ?? "reexport"}`, line: stmt.loc.start.line };
			}
			walk(program, (n) => {
				const add = (src, typeOnly, kind) => result.imports.push({ source: src, typeOnly, kind, line: n.loc ? n.loc.start.line : null });
				if (n.type === "ImportDeclaration")
					add(n.source.value, n.importKind === "type" || (n.specifiers.length > 0 && n.specifiers.every((s) => s.importKind === "type")), "import");
				else if ((n.type === "ExportNamedDeclaration" || n.type === "ExportAllDeclaration") && n.source)
					add(n.source.value, n.exportKind === "type", "reexport");
				else if (n.type === "ImportExpression" || (n.type === "CallExpression" && n.callee.type === "Import"))
					add(n.source?.value ?? n.arguments?.[0]?.value ?? null, false, "dynamic");
				else if (n.type === "CallExpression" && n.callee.type === "Identifier" && n.callee.name === "require" && n.arguments[0]?.type === "StringLiteral")
					add(n.arguments[0].value, false, "require");
				else if (n.type === "TSImportType") add(n.argument?.value ?? n.argument?.literal?.value ?? null, true, "import-type");
			});
		},
	});
	const out = transform({ source, filename: file, ts: /\.[cm]?tsx?$/.test(file), async: true, babel: { plugins: [plugin] } });
	if (out.error) result.parseError = String(out.error.message || out.error);
	return result;
}

const files = {};
const missing = [];
const queue = entries.map((e) => path.resolve(root, e));
const EXTS = ["", ".ts", ".mts", ".js", ".mjs", ".cjs", "/index.ts", "/index.js"];
while (queue.length) {
	const file = queue.shift();
	const rel = path.relative(root, file);
	if (rel in files) continue;
	if (!fs.existsSync(file) || !fs.statSync(file).isFile()) { missing.push(rel); files[rel] = null; continue; }
	const r = scan(file);
	files[rel] = r;
	for (const imp of r.imports) {
		if (!imp.source || !imp.source.startsWith(".") || imp.typeOnly) continue;
		const base = path.resolve(path.dirname(file), imp.source);
		const hit = EXTS.map((x) => base + x).find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
		const target = hit ?? base;
		imp.resolved = path.relative(root, target);
		queue.push(target);
	}
}
process.stdout.write(JSON.stringify({ files, missing }, null, 1) + "\n");
