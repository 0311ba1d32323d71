"""The manifest and layout checks (spec §16, §17): ``package.json``, the entries, the dependencies.

Each check is named after what it decides; the names are stable (tests and records use them).
Pi's behaviour behind each one, with file:line in the shipped package
(``@earendil-works/pi-coding-agent`` 1.6.0, ``dist/``):

* ``pi.extensions`` is read only when it is an array of strings (``core/pi-manifest.js:7-29``);
  an entry naming no file is **dropped silently** (``core/package-manager.js:2243-2262``), so
  ``manifest.pi.extensions-exist`` checks what Pi would not report. Without ``pi.extensions`` Pi
  still loads ``extensions/`` by convention (``package-manager.js:2048-2060``, ``:396-478``):
  the entries are then found the way Pi finds them, and only ``manifest.pi.extensions`` fails.
* The default export must be a function, else "Extension does not export a valid factory
  function" (``core/extensions/loader.js:508-510``); §16 asks for the factory form, which is
  what ``entry.default-export-factory`` reads statically.
* Host packages (Pi supplies them to extensions through jiti's virtual modules,
  ``loader.js:37-89``) belong in ``peerDependencies`` with ``"*"``; in ``dependencies`` Pi warns
  (``core/resource-loader.js:18-55``).
* npm runs ``preinstall``/``install``/``postinstall`` when Pi installs an npm source, and
  ``prepare`` too for a git source (measured; ``package-manager.js:1646-1675``, ``:1694-1726``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from pi_continuity_harness.package.model import Check, Status
from pi_continuity_harness.package.scan import ModuleGraph
from pi_continuity_harness.package.source import PackageInput

__all__ = [
    "FACTORY_KINDS",
    "HOST_PACKAGES",
    "dependency_checks",
    "entries",
    "entry_checks",
    "manifest_checks",
]

#: Packages Pi provides to extensions (``core/resource-loader.js`` HOST_PROVIDED_EXTENSION_PACKAGES,
#: ``core/extensions/loader.js:37-89``).
HOST_PACKAGES = frozenset(
    {
        "@earendil-works/pi-agent-core",
        "@earendil-works/pi-ai",
        "@earendil-works/pi-coding-agent",
        "@earendil-works/pi-tui",
        "@mariozechner/pi-agent-core",
        "@mariozechner/pi-ai",
        "@mariozechner/pi-coding-agent",
        "@mariozechner/pi-tui",
        "@sinclair/typebox",
        "typebox",
    }
)
#: Build and test tools, which belong in ``devDependencies`` (§17).
_DEV_TOOLS = re.compile(
    r"^(typescript|tsx|ts-node|vitest|jest|mocha|ava|c8|nyc|eslint(-.*)?|@eslint/.*|prettier|@biomejs/.*|"
    r"@types/.*|@typescript-eslint/.*|esbuild|rollup|vite|tsup|@vitest/.*|@earendil-works/pi-test-harness)$"
)
_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall")
#: npm runs these of the root package when Pi installs a git source (``npm install`` in the clone).
_GIT_INSTALL_SCRIPTS = ("prepare", "preprepare", "postprepare", "prepublish")
_NODE_BUILTINS = frozenset(
    [
        "assert",
        "async_hooks",
        "buffer",
        "child_process",
        "cluster",
        "console",
        "constants",
        "crypto",
        "dgram",
        "diagnostics_channel",
        "dns",
        "domain",
        "events",
        "fs",
        "http",
        "http2",
        "https",
        "inspector",
        "module",
        "net",
        "os",
        "path",
        "perf_hooks",
        "process",
        "punycode",
        "querystring",
        "readline",
        "repl",
        "stream",
        "string_decoder",
        "sys",
        "timers",
        "tls",
        "trace_events",
        "tty",
        "url",
        "util",
        "v8",
        "vm",
        "wasi",
        "worker_threads",
        "zlib",
        "test",
        "sqlite",
    ]
)
#: The keyword Pi's package gallery finds packages by (Pi's docs/packages.md).
_KEYWORDS = ("pi-package",)
_SEMVER = re.compile(r"\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")
#: Default exports that are a function in the source (directly, through a name, or ``{f as default}``).
FACTORY_KINDS = frozenset(
    {
        "FunctionDeclaration",
        "ArrowFunctionExpression",
        "FunctionExpression",
        "Identifier:function",
        "Identifier:ArrowFunctionExpression",
        "Identifier:FunctionExpression",
        "ExportSpecifier:function",
        "ExportSpecifier:ArrowFunctionExpression",
        "ExportSpecifier:FunctionExpression",
    }
)

Add = Callable[[str, bool, str, str, str], None]


def _adder(out: list[Check], phase: str = "static") -> Add:
    def add(name: str, ok: bool, file: str, field: str, detail: str = "") -> None:
        status: Status = "pass" if ok else "fail"
        out.append(Check(name, status, file, field, detail, phase))

    return add


def _declared_extensions(manifest: dict[str, Any]) -> list[Any] | None:
    pi = manifest.get("pi")
    if not isinstance(pi, dict) or "extensions" not in pi:
        return None
    value = pi["extensions"]
    return value if isinstance(value, list) else [value]


def _convention_entries(package: PackageInput) -> list[str]:
    """What Pi loads from a package without ``pi.extensions``: ``extensions/index.{ts,js}``, else
    ``extensions/*.{ts,js}`` and ``extensions/<dir>/index.{ts,js}`` (``package-manager.js:396-478``)."""
    directory = package.root / "extensions"
    if not directory.is_dir():
        return []
    for index in ("index.ts", "index.js"):
        if (directory / index).is_file():
            return [f"extensions/{index}"]
    found: list[str] = []
    for child in sorted(directory.iterdir()):
        if child.name.startswith(".") or child.name == "node_modules":
            continue
        if child.is_file() and child.suffix in (".ts", ".js"):
            found.append(f"extensions/{child.name}")
        elif child.is_dir():
            found.extend(
                f"extensions/{child.name}/{index}"
                for index in ("index.ts", "index.js")
                if (child / index).is_file()
            )
    return found


def entries(package: PackageInput) -> list[str]:
    """The extension entry files Pi would load (package-relative, normalised): the plain entries of
    ``pi.extensions``, or the convention entries when it is absent."""
    declared = _declared_extensions(package.manifest)
    if declared is None:
        return _convention_entries(package)
    plain = [e for e in declared if isinstance(e, str) and not e.startswith(("!", "+", "-")) and "*" not in e]
    return [posixpath.normpath(e) for e in plain]


def manifest_checks(package: PackageInput) -> list[Check]:
    m = package.manifest
    pj = package.file("package.json")
    out: list[Check] = []
    add = _adder(out)
    name = m.get("name")
    add("manifest.name", isinstance(name, str) and bool(name.strip()), pj, "name", repr(name))
    version = m.get("version")
    add(
        "manifest.version",
        isinstance(version, str) and _SEMVER.fullmatch(version) is not None,
        pj,
        "version",
        f"{version!r} (needs a semver version)",
    )
    add("manifest.license", m.get("license") == "MIT", pj, "license", f"{m.get('license')!r} (needs 'MIT')")
    add("manifest.type", m.get("type") == "module", pj, "type", f"{m.get('type')!r} (needs 'module')")
    keywords = m.get("keywords")
    add(
        "manifest.keywords",
        isinstance(keywords, list) and all(k in keywords for k in _KEYWORDS),
        pj,
        "keywords",
        f"{keywords!r} (needs {list(_KEYWORDS)})",
    )
    files = m.get("files")
    add(
        "manifest.files",
        isinstance(files, list) and bool(files) and all(isinstance(f, str) for f in files),
        pj,
        "files",
        repr(files),
    )
    scripts = m.get("scripts") if isinstance(m.get("scripts"), dict) else {}
    assert isinstance(scripts, dict)
    for script in ("test", "typecheck", "smoke:manual"):
        value = scripts.get(script)
        add(
            f"manifest.scripts.{script}",
            isinstance(value, str) and bool(value.strip()),
            pj,
            f"scripts.{script}",
            repr(value),
        )
    bad = [s for s in _INSTALL_SCRIPTS if s in scripts]
    add(
        "manifest.no-install-scripts",
        not bad,
        pj,
        "scripts",
        f"npm runs {bad} when Pi installs the package" if bad else "none of " + ", ".join(_INSTALL_SCRIPTS),
    )
    git_bad = [s for s in _GIT_INSTALL_SCRIPTS if s in scripts]
    add(
        "manifest.no-git-install-scripts",
        not git_bad,
        pj,
        "scripts",
        f"npm runs {git_bad} when Pi installs a git source" if git_bad else "",
    )
    declared = _declared_extensions(m)
    add(
        "manifest.pi.extensions",
        declared is not None and bool(declared) and all(isinstance(e, str) for e in declared),
        pj,
        "pi.extensions",
        repr(declared)
        if declared is not None
        else f"absent (Pi would load {entries(package) or 'nothing'} by convention)",
    )
    if declared:
        plain = entries(package)
        missing = [e for e in plain if not (package.root / e).is_file()]
        add(
            "manifest.pi.extensions-exist",
            bool(plain) and not missing,
            pj,
            "pi.extensions",
            f"no such file: {missing} (Pi drops it silently)" if missing else ", ".join(plain),
        )
    else:
        out.append(
            Check("manifest.pi.extensions-exist", "not-run", pj, "pi.extensions", "no pi.extensions to check")
        )
    return out


def entry_checks(package: PackageInput, graph: ModuleGraph) -> list[Check]:
    """Each entry parses with Pi's parser and default-exports a factory function (§16)."""
    out: list[Check] = []
    add = _adder(out)
    found = entries(package)
    if not found:
        add("entry.default-export-factory", False, package.file("package.json"), "pi.extensions", "no entry")
    for entry in found:
        file = package.file(entry)
        scanned = graph.files.get(entry)
        if scanned is None:
            out.append(
                Check("entry.default-export-factory", "not-run", file, "export default", "no such file")
            )
            continue
        if scanned.parse_error:
            add(
                "entry.default-export-factory",
                False,
                file,
                "export default",
                scanned.parse_error.splitlines()[0],
            )
            continue
        kind = scanned.default_export
        if kind in FACTORY_KINDS:
            add(
                "entry.default-export-factory",
                True,
                file,
                "export default",
                f"{kind} (line {scanned.default_export_line})",
            )
        elif kind is None:
            add("entry.default-export-factory", False, file, "export default", "no default export")
        else:
            add(
                "entry.default-export-factory",
                False,
                file,
                "export default",
                f"{kind} (line {scanned.default_export_line}): not a function in the source "
                "(§16: `export default function (pi: ExtensionAPI)`)",
            )
    return out


def _bare(source: str) -> str:
    parts = source.split("/")
    return "/".join(parts[:2]) if source.startswith("@") else parts[0]


def dependency_checks(package: PackageInput, graph: ModuleGraph) -> list[Check]:
    """Host packages as ``"*"`` peers, third-party runtime imports in ``dependencies``, tools in
    ``devDependencies`` (§17)."""
    m = package.manifest
    pj = package.file("package.json")
    out: list[Check] = []
    add = _adder(out)

    def table(key: str) -> dict[str, Any]:
        value = m.get(key)
        return value if isinstance(value, dict) else {}

    peers, deps, dev = table("peerDependencies"), table("dependencies"), table("devDependencies")
    bare = sorted(
        {
            _bare(imp.source)
            for _file, imp in graph.imports()
            if imp.source
            and not imp.source.startswith((".", "/", "node:"))
            and _bare(imp.source) not in _NODE_BUILTINS
        }
    )
    host = [name for name in bare if name in HOST_PACKAGES]
    for name in host:
        add(
            f"deps.host-peer:{name}",
            peers.get(name) == "*",
            pj,
            f"peerDependencies.{name}",
            f'imported; range {peers.get(name)!r} (needs "*")',
        )
    for name, range_ in sorted(peers.items()):
        if name in HOST_PACKAGES and name not in host:
            add(
                f"deps.host-peer:{name}",
                range_ == "*",
                pj,
                f"peerDependencies.{name}",
                f"declared; range {range_!r}",
            )
    in_deps = sorted(name for name in deps if name in HOST_PACKAGES)
    add(
        "deps.host-not-in-dependencies",
        not in_deps,
        pj,
        "dependencies",
        f"host packages belong in peerDependencies: {in_deps}" if in_deps else "",
    )
    for name in (n for n in bare if n not in HOST_PACKAGES):
        where = "devDependencies" if name in dev else "no dependency list"
        add(
            f"deps.runtime:{name}",
            name in deps,
            pj,
            f"dependencies.{name}",
            "imported at run time" + ("" if name in deps else f"; found in {where}"),
        )
    tools = sorted(name for name in deps if _DEV_TOOLS.match(name))
    add(
        "deps.tools-in-devDependencies",
        not tools,
        pj,
        "dependencies",
        f"build/test tools belong in devDependencies: {tools}" if tools else "",
    )
    return out
