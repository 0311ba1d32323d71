"""The documentation checks (spec §19): README topics, CHANGELOG notes for the version, MIT LICENSE.

A topic is found by its heading and the words §19 requires it to name (the table
:data:`README_TOPICS` for Pi Session Continuity; :data:`BLITZ_README_TOPICS` for pi-blitz-handoff,
whose agent reference is "a meaning-equivalent derivative" of its root README, so the README must
carry what the reference states: requirements, the three install forms, the commands, the model
tool, every setting, the managed paths and the dossier's privacy). Whether the one-paragraph
product explanation explains the product, and whether the core invariant is explained correctly,
only a person can judge: those are reported ``needs-a-person``, never ``pass`` (the invariant's
keywords are still required, and missing ones fail).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pi_continuity_harness.package.model import Check
from pi_continuity_harness.package.source import PackageInput

__all__ = ["BLITZ_README_TOPICS", "README_TOPICS", "Topic", "docs_checks", "readme_topics"]


@dataclass(frozen=True)
class Topic:
    id: str
    #: What §19 asks for (the check's field).
    what: str
    #: Patterns that must all match somewhere in the README.
    patterns: tuple[str, ...]
    #: A person judges the text even when every pattern matches.
    person: bool = False


README_TOPICS: tuple[Topic, ...] = (
    Topic("product-paragraph", "one-paragraph product explanation", (r"(?m)^# \S",), person=True),
    Topic(
        "install-pinned",
        "installation from a pinned ref or version",
        (r"pi install (git:\S+@v?\d+\.\d+\.\d+|npm:\S+@\d+\.\d+\.\d+)",),
    ),
    Topic(
        "quick-start",
        "quick start with /continuity status and /continuity checkpoint",
        (r"(?im)^#+ .*quick ?start", r"/continuity status", r"/continuity checkpoint"),
    ),
    Topic(
        "command-reference",
        "command reference",
        (r"(?im)^#+ .*command", r"/continuity status", r"/continuity checkpoint", r"/continuity settings"),
    ),
    Topic(
        "configuration",
        "configuration reference: extension config and native compaction settings",
        (r"(?im)^#+ .*config", r"session-continuity\.json", r"reserveTokens", r"keepRecentTokens"),
    ),
    Topic("restart", "restart requirements", (r"(?i)restart",)),
    Topic(
        "core-invariant",
        "the core invariant: artifact first, the exact disk Brief as the compaction summary",
        (r"(?i)invariant", r"(?i)compaction summary", r"(?i)disk|durable"),
        person=True,
    ),
    Topic("artifact-layout", "artifact layout", (r"pending/", r"archive/", r"failed/")),
    Topic("privacy", "privacy warning: Briefs may contain sensitive context", (r"(?i)privacy|sensitive",)),
    Topic("limitations", "known limitations", (r"(?im)^#+ .*limitation",)),
    Topic(
        "troubleshooting",
        "troubleshooting: invalid config, synthesis failure, write failure, stale pending, untrusted project",
        (
            r"(?im)^#+ .*troubleshoot",
            r"(?i)invalid config",
            r"(?i)synthesis fail",
            r"(?i)write fail",
            r"(?i)stale pending",
            r"(?i)untrusted",
        ),
    ),
    Topic(
        "uninstall-update",
        "uninstall and update with Pi's package commands",
        (r"pi (remove|uninstall) ", r"pi (update|install) "),
    ),
    Topic(
        "compatibility",
        "compatibility: the minimum Pi version tested",
        (r"(?im)^#+ .*compatib", r"(?i)pi\D{0,40}\d+\.\d+\.\d+"),
    ),
)

#: pi-blitz-handoff 2.0's README, as its agent reference (``pi-blitz-handoff-reference.md``)
#: restates it: "Requirements and installation", "Public interface", "Settings", "Managed paths,
#: templates and projects", "Data and development evidence".
BLITZ_README_TOPICS: tuple[Topic, ...] = (
    Topic("product-paragraph", "one-paragraph product explanation", (r"(?m)^# \S",), person=True),
    Topic(
        "requirements",
        "requirements: Node.js >= 22.19.0, Pi >= 1.5.0, a persisted session (no --no-session)",
        (r"(?i)node(\.js)?\W{0,4}>=?\s*22", r"(?i)pi\S*\W{0,4}>=?\s*1\.\d+\.\d+", r"--no-session"),
    ),
    Topic(
        "install",
        "installation from npm and git, and a one-run load",
        (r"pi install npm:\S+", r"pi install git:\S+", r"pi -e npm:\S+"),
    ),
    Topic(
        "command-reference",
        "command reference: /sh and its six subcommands",
        (
            r"(?im)^#+ .*(command|interface)",
            *(
                rf"/sh {sub}\b"
                for sub in ("start", "help", "cancel", "recover", "settings", "project-template")
            ),
        ),
    ),
    Topic("model-tool", "the model tool: blitz_handoff status and start", (r"blitz_handoff",)),
    Topic(
        "settings",
        "settings reference: every key with its default",
        (
            r"(?im)^#+ .*setting",
            *(
                re.escape(key)
                for key in (
                    "contextWarningPercent",
                    "criticalWarningPercent",
                    "automaticSessionHandoff",
                    "deferPromptsFrom",
                    "deleteHandoffAfterReading",
                    "automaticSessionHandoffPercent",
                    "readinessRetrySeconds",
                    "maxSessionChainLength",
                    "recoveryDirectory",
                    "templateDirectory",
                    "callTemplate",
                    "handoffTemplate",
                )
            ),
        ),
    ),
    Topic(
        "managed-paths",
        "managed paths: config, project templates, recovery, templates",
        (r"pi-blitz-handoff/", r"config\.json", r"project-templates\.json", r"recovery/", r"templates/"),
    ),
    Topic(
        "dossier-privacy",
        "the dossier file, its plaintext content and keeping it out of Git",
        (r"\.pi/handoff_", r"(?i)plaintext|privacy|sensitive", r"(?i)\bgit\b"),
    ),
    Topic("permissions", "the extension runs with Pi's process permissions", (r"(?i)permission",)),
)

#: The README topics of each system the gate knows (``--system``).
_TOPICS_BY_SYSTEM: dict[str, tuple[Topic, ...]] = {
    "pi-session-continuity": README_TOPICS,
    "pi-blitz-handoff": BLITZ_README_TOPICS,
}


def readme_topics(system: str | None) -> tuple[Topic, ...]:
    """The README topics of ``system`` (None: Pi Session Continuity, the gate's default)."""
    return _TOPICS_BY_SYSTEM.get(system or "pi-session-continuity", README_TOPICS)


_MIT_SENTENCES = (
    "MIT License",
    "Permission is hereby granted, free of charge, to any person obtaining a copy",
    'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND',
)


def _read(package: PackageInput, name: str) -> str | None:
    path = package.root / name
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


def docs_checks(package: PackageInput, system: str | None = None) -> list[Check]:
    out: list[Check] = []
    readme = _read(package, "README.md")
    file = package.file("README.md")
    for topic in readme_topics(system):
        name = f"docs.readme:{topic.id}"
        if readme is None:
            out.append(Check(name, "fail", file, topic.what, "no README.md"))
            continue
        missing = [p for p in topic.patterns if not re.search(p, readme)]
        if missing:
            out.append(Check(name, "fail", file, topic.what, f"not found: {missing}"))
        elif topic.person:
            out.append(
                Check(
                    name, "needs-a-person", file, topic.what, "found; whether it explains it, a person judges"
                )
            )
        else:
            out.append(Check(name, "pass", file, topic.what))
    version = package.version
    changelog = _read(package, "CHANGELOG.md")
    heading = re.compile(rf"(?m)^#+ \[?v?{re.escape(version)}\]?(\s|$)") if version else None
    ok = changelog is not None and heading is not None and heading.search(changelog) is not None
    out.append(
        Check(
            "docs.changelog-version",
            "pass" if ok else "fail",
            package.file("CHANGELOG.md"),
            f"## [{version}]",
            "" if ok else ("no CHANGELOG.md" if changelog is None else f"no heading for version {version}"),
        )
    )
    license_text = _read(package, "LICENSE")
    flat = re.sub(r"\s+", " ", license_text or "")
    missing_text = [s for s in _MIT_SENTENCES if s not in flat]
    out.append(
        Check(
            "docs.license-mit",
            "pass" if license_text is not None and not missing_text else "fail",
            package.file("LICENSE"),
            "text",
            "no LICENSE" if license_text is None else (f"not found: {missing_text}" if missing_text else ""),
        )
    )
    return out
