"""Reading what a run left on disk: JSON records, artifacts, and the limits a curve starts with.

The report reads files and plain records, never the simulator's or the targets' objects, so
it draws a real-Pi run and a simulated one the same way (``tests/test_boundaries.py`` holds it
to that). A scenario's work directory holds:

* ``trace.jsonl`` (simulator only), ``observation.json`` (both targets);
* the machine, in a directory of its own (``scenario/layout.py``: a padding directory whose
  path has the same length on both targets) or, in older runs, the scenario directory itself
  (:func:`machine_dir`): ``agent/models.json`` (real Pi), ``agent/settings.json``,
  ``project/.pi/settings.json``, ``sessions/*.jsonl``, and the artifacts (Briefs, postmortems,
  handoff dossiers, recovery files);
* ``requests/`` when the run kept the full model requests and replies.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pi_continuity_harness.errors import ReportError
from pi_continuity_harness.report.curve import Curve, Limits, curve_from_observation, curve_from_trace

__all__ = [
    "ARTIFACT_BYTES",
    "ARTIFACT_LIMIT",
    "HARNESS_DEFAULT_WINDOW",
    "PI_DEFAULT_RESERVE",
    "Artifact",
    "YamlAliasError",
    "initial_limits",
    "load_artifacts",
    "load_yaml_without_aliases",
    "machine_dir",
    "read_artifact",
    "read_json",
    "read_jsonl",
    "scenario_curve",
]

#: Pi 1.6's default ``compaction.reserveTokens`` (``dist/core/settings-defaults.js:10``).
PI_DEFAULT_RESERVE = 16_384
#: The suite's default model window (``features/world.py`` ``DEFAULT_WINDOW``).
HARNESS_DEFAULT_WINDOW = 200_000
#: At most this many artifacts per scenario, each shown up to this many bytes.
ARTIFACT_LIMIT = 24
ARTIFACT_BYTES = 64 * 1024


def read_json(path: Path) -> Any:
    """A JSON file; a file that is not JSON is a :class:`ReportError` naming it and the line."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ReportError(f"{path}: line {error.lineno}: not JSON: {error.msg}") from None
    except RecursionError:  # json's C decoder recurses per level
        raise ReportError(f"{path}: not JSON: nested too deeply to read") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ReportError(f"{path}: cannot be read: {error}") from None


class YamlAliasError(ReportError, yaml.YAMLError):
    """A record's YAML uses an alias, which the report does not expand."""


def load_yaml_without_aliases(text: str) -> Any:
    """``yaml.safe_load(text)``, refusing a document that uses an alias (``yaml.YAMLError``).

    A record's YAML (a Brief's frontmatter, a minimised scenario) is drawn by walking it, and a
    few lines of aliases can stand for billions of values or contain themselves; the harness's
    own loader measures that (``scenario.yaml_text.expansion_problem``), but the report reads
    records as plain data with nothing of the harness's below it, so it does not expand aliases
    at all: none of the files it draws needs one.

    Both passes use libyaml (``CSafeLoader``, the safe constructors of ``yaml.safe_load``): the
    pure-Python loader the second pass used took 1.9 of a 223-scenario report's 9 CPU-seconds
    (issue 16), and a text libyaml refuses has already raised in the first pass."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            raise YamlAliasError(f"uses the YAML alias *{event.anchor}, which the report does not expand")
    return yaml.load(text, Loader=loader)  # a safe loader: CSafeLoader, else SafeLoader


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A JSON-lines file (a trace); a bad line is a :class:`ReportError` naming it."""
    out: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as error:
                    raise ReportError(f"{path}: line {number}: not JSON: {error.msg}") from None
                except RecursionError:
                    raise ReportError(f"{path}: line {number}: not JSON: nested too deeply to read") from None
                if not isinstance(value, dict):
                    raise ReportError(f"{path}: line {number}: not a JSON object")
                out.append(value)
    except (OSError, UnicodeDecodeError) as error:
        raise ReportError(f"{path}: cannot be read: {error}") from None
    return out


def machine_dir(workdir: Path) -> Path:
    """The directory holding a scenario's machine (``agent/``, ``project/``, ``sessions/``): the
    scenario directory itself, else the first of its subdirectories that has one of them (the
    layout's padding directory). Found by content, so the report needs no layout rule."""
    for candidate in (
        [workdir, *sorted(p for p in workdir.iterdir() if p.is_dir())] if workdir.is_dir() else []
    ):
        if any((candidate / part).is_dir() for part in ("agent", "project", "sessions")):
            return candidate
    return workdir


# ====================================================================== artifacts
@dataclass
class Artifact:
    path: str
    relative: str
    sha256: str
    size: int
    text: str
    truncated: bool = False
    frontmatter: dict[str, Any] | None = None
    frontmatter_error: str = ""
    body: str = ""


def _split_frontmatter(text: str) -> tuple[str | None, str]:
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---", 4)
    if end < 0:
        return None, text
    after = text.find("\n", end + 4)
    return text[4:end], (text[after + 1 :] if after >= 0 else "")


def read_artifact(path: Path, root: Path) -> Artifact:
    """One artifact: its hash and size (of the whole file), text, frontmatter and body."""
    data = path.read_bytes()
    try:
        relative = str(path.relative_to(root))
    except ValueError:
        relative = path.name
    text = data[:ARTIFACT_BYTES].decode("utf-8", errors="replace")
    artifact = Artifact(
        path=str(path),
        relative=relative,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        text=text,
        truncated=len(data) > ARTIFACT_BYTES,
    )
    front, artifact.body = _split_frontmatter(text)
    if front is not None:
        try:
            value = load_yaml_without_aliases(front)
        except YamlAliasError as error:
            artifact.frontmatter_error = f"the frontmatter is refused: {error}"
        except yaml.YAMLError as error:
            artifact.frontmatter_error = f"the frontmatter does not parse: {error}"
        else:
            if isinstance(value, dict):
                artifact.frontmatter = {str(k): v for k, v in value.items()}
            else:
                artifact.frontmatter_error = "the frontmatter is not a mapping"
    return artifact


#: Directories under ``project/`` and ``agent/`` whose Markdown is not an artifact of the run.
_NOT_ARTIFACTS = frozenset({"sessions", "tmp", "home", "harness-extensions", "node_modules", "templates"})


def load_artifacts(workdir: Path | None, listed: Iterable[str] = ()) -> list[Artifact]:
    """The artifacts of a scenario: those the run listed, then the Markdown files under
    ``project/`` and ``agent/`` (Briefs, failed postmortems, handoff dossiers, recovery files),
    each once, at most :data:`ARTIFACT_LIMIT`, in that order (sorted paths: repeatable)."""
    paths: list[Path] = [Path(p) for p in listed]
    root = machine_dir(workdir) if workdir is not None else None
    if root is not None:
        for top in ("project", "agent"):
            base = root / top
            if base.is_dir():
                paths += [
                    p
                    for p in sorted(base.rglob("*.md"))
                    if p.is_file() and not _NOT_ARTIFACTS.intersection(p.relative_to(root).parts)
                ]
    seen: set[str] = set()
    out: list[Artifact] = []
    for p in paths:
        if not p.is_file():
            continue
        key = str(p.resolve())
        if key in seen:
            continue
        seen.add(key)
        out.append(read_artifact(p, root or p.parent))
        if len(out) >= ARTIFACT_LIMIT:
            break
    return out


# ====================================================================== limits
def _compaction(*layers: Any) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        section = layer.get("compaction") if isinstance(layer, Mapping) else None
        if isinstance(section, Mapping):
            merged.update(section)
    return merged


def _first_session_model(workdir: Path) -> str | None:
    sessions = workdir / "sessions"
    if not sessions.is_dir():
        return None
    for path in sorted(sessions.glob("*.jsonl")):
        try:
            entries = read_jsonl(path)
        except ReportError:
            continue
        for entry in entries:
            if entry.get("type") == "model_change":
                return f"{entry.get('provider')}/{entry.get('modelId')}"
    return None


def _window_from_models_json(workdir: Path) -> int | None:
    """Real Pi: the ``contextWindow`` of the session's first model in ``agent/models.json``, or
    of the first model listed when there is no session file yet (Pi's default model: the
    first authenticated one, in models.json order)."""
    path = workdir / "agent" / "models.json"
    if not path.is_file():
        return None
    try:
        providers = read_json(path).get("providers") or {}
        candidates = [
            (f"{name}/{model.get('id')}", model.get("contextWindow"))
            for name, provider in providers.items()
            for model in provider.get("models") or []
        ]
    except (ReportError, AttributeError):
        return None
    first = _first_session_model(workdir)
    chosen = next((w for full, w in candidates if full == first), None)
    if chosen is None and first is None and candidates:
        chosen = candidates[0][1]
    return chosen if isinstance(chosen, int) else None


def _settings_layers(workdir: Path) -> list[Any]:
    layers: list[Any] = []
    for relative in ("agent/settings.json", "project/.pi/settings.json"):
        path = workdir / relative
        try:
            layers.append(read_json(path) if path.is_file() else None)
        except ReportError:
            layers.append(None)
    return layers


def initial_limits(
    workdir: Path | None, scenario: Mapping[str, Any] | None = None, artifacts: Iterable[Artifact] = ()
) -> Limits:
    """The window and reserve at the session's start, and where each came from.

    A simulator trace says so itself (its ``host runtime`` records); these are for the rest.
    Window: the scenario file (``models[].context_window`` of ``active_model``, else the first),
    else ``agent/models.json`` (real Pi), else the first Brief's ``contextWindow``, else the
    suite's default (marked as assumed). Reserve: the scenario file's settings, else
    ``agent/settings.json`` then ``project/.pi/settings.json`` (as at the end of the run), else
    a Brief's ``reserveTokens``, else Pi's default (marked as assumed).
    """
    window: int | None = None
    reserve: int | None = None
    window_source = reserve_source = ""
    briefs = [a.frontmatter for a in artifacts if a.frontmatter]
    if scenario:
        models = [m for m in scenario.get("models") or [] if isinstance(m, Mapping)]
        active = scenario.get("active_model")
        chosen = next((m for m in models if m.get("id") == active), models[0] if models else None)
        if chosen is not None and isinstance(chosen.get("context_window"), int):
            window, window_source = chosen["context_window"], "scenario file (models[].context_window)"
        settings = scenario.get("settings") or {}
        merged = _compaction(settings.get("global"), settings.get("project"))
        if isinstance(merged.get("reserveTokens"), int):
            reserve = merged["reserveTokens"]
            reserve_source = "scenario file (settings.compaction.reserveTokens)"
    if workdir is not None:
        machine = machine_dir(workdir)
        if window is None and (found := _window_from_models_json(machine)) is not None:
            window, window_source = found, "agent/models.json (contextWindow)"
        if reserve is None:
            merged = _compaction(*_settings_layers(machine))
            if isinstance(merged.get("reserveTokens"), int):
                reserve = merged["reserveTokens"]
                reserve_source = "settings.json (compaction.reserveTokens, at the end of the run)"
    if window is None and briefs and isinstance(briefs[0].get("contextWindow"), int):
        window, window_source = briefs[0]["contextWindow"], "Brief frontmatter (contextWindow)"
    if reserve is None and briefs and isinstance(briefs[0].get("reserveTokens"), int):
        reserve, reserve_source = briefs[0]["reserveTokens"], "Brief frontmatter (reserveTokens)"
    if window is None:
        window, window_source = HARNESS_DEFAULT_WINDOW, "assumed: the suite's default model window"
    if reserve is None:
        reserve, reserve_source = PI_DEFAULT_RESERVE, "assumed: Pi's default reserveTokens"
    return Limits(window, reserve, window_source, reserve_source)


def scenario_curve(
    workdir: Path | None,
    scenario: Mapping[str, Any] | None = None,
    artifacts: Iterable[Artifact] = (),
    trace: list[dict[str, Any]] | None = None,
    observation: Mapping[str, Any] | None = None,
) -> Curve | None:
    """The curve from the trace when there is one (simulator), else from the observation."""
    limits = initial_limits(workdir, scenario, artifacts)
    if trace is not None:
        return curve_from_trace(trace, limits)
    if observation is not None and observation.get("started", True):
        return curve_from_observation(observation, limits)
    return None
