"""Pi's settings: global and project files, deep-merged, read once, validated on use, and the
few global keys Pi itself writes.

Modelled from ``dist/core/settings-manager.js`` and ``main.js`` (trust):

* global ``<agentDir>/settings.json`` and project ``<cwd>/<CONFIG_DIR_NAME>/settings.json``,
  deep-merged with the project winning; the project file is not read at all when the
  project is untrusted (§9.20);
* **not hot-reloaded** (§9.19): the files are read when a runtime is created (startup,
  restart, new session) and on reload; edits in between are invisible;
* compaction token settings are resolved per model (``modelOverrides["provider/id"]``),
  and an invalid value raises *when read*, with Pi's message;
* ``enabled`` defaults to true, ``reserveTokens`` to 16384, ``keepRecentTokens`` to 20000;
* a file that is not valid JSON, or holds a JSON value other than an object or an array,
  counts as empty and is reported as a load error; an array is the object its indexes make
  (Pi spreads it), and keys that are array indexes come first, as JavaScript orders them;
* what is read is migrated (``migrateSettings``: ``queueMode`` is ``steeringMode``, ...);
* RPC ``set_auto_compaction``, ``set_auto_retry``, ``set_steering_mode`` and
  ``set_follow_up_mode`` change a global key in memory and write the global file over what it
  holds then (``persistScopedSettings``).

Trust follows ``main.js:652-658``: an explicit ``--approve``/``--no-approve`` wins, then a
saved decision in ``<agentDir>/trust.json``, then, when the project has trust-requiring
resources (``.pi/settings.json``, ``.pi/extensions``, ...), ``defaultProjectTrust``
(``always`` trusts; ``ask`` and ``never`` are untrusted without an interactive prompt),
otherwise trusted.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_continuity_harness.api.events import CompactionSettings
from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME, Model
from pi_continuity_harness.errors import SimulatorError
from pi_continuity_harness.scenario.transcript import js_string
from pi_continuity_harness.scenario.workspace import deep_merge, path_exists
from pi_continuity_harness.simulator.compaction import DEFAULT_COMPACTION_SETTINGS
from pi_continuity_harness.simulator.json_copy import js_loads, js_ordered
from pi_continuity_harness.simulator.virtual_root import disk_path

__all__ = [
    "TRUST_REQUIRING_RESOURCES",
    "SettingsError",
    "SettingsManager",
    "SettingsWriteNotModelledError",
    "TrustDecision",
    "has_trust_requiring_resources",
    "resolve_project_trust",
]

TRUST_REQUIRING_RESOURCES = (
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)

_DEFAULTS = DEFAULT_COMPACTION_SETTINGS.to_json()
_RETRY_DEFAULTS = {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000, "maxAgentDelayMs": 60000}


class SettingsWriteNotModelledError(SimulatorError):
    """A settings write Pi would make that the simulator does not model (says which)."""


class SettingsError(SimulatorError, ValueError):
    """An invalid settings value, with Pi's wording."""


def has_trust_requiring_resources(cwd: str) -> bool:
    """``hasTrustRequiringProjectResources`` for the project directory itself.

    Pi also looks for ``.agents/skills`` in ancestors; the simulator's workspaces never have one.

    The paths are strings, tested with :func:`.workspace.path_exists` (``Path.exists``'s rule): every runtime
    asks, and a ``Path`` built and parsed per resource was most of the cost.
    """
    return any(_exists(path) for path in _trust_requiring_paths(cwd))


@functools.lru_cache(maxsize=64)
def _trust_requiring_paths(cwd: str) -> tuple[str, ...]:
    """What :func:`has_trust_requiring_resources` looks for, in its order: a function of the
    string, the same for every host (one virtual root, ``virtual_root.py``), built once rather
    than at every runtime's start."""
    config_dir = os.path.join(cwd, CONFIG_DIR_NAME)
    return (
        *(os.path.join(config_dir, name) for name in TRUST_REQUIRING_RESOURCES),
        os.path.join(cwd, ".agents", "skills"),
    )


def _exists(path: str) -> bool:
    """:func:`.workspace.path_exists` of ``path`` asked of its disk spelling
    (:func:`.virtual_root.disk_path`); a failure other than "not there" is asked again of the
    host's spelling, whose error (and file name) is raised."""
    try:
        return path_exists(disk_path(path))
    except OSError:
        return path_exists(path)


def _open_text(path: str) -> str:
    """The text of ``path`` (UTF-8), read through its disk spelling (:func:`.virtual_root.disk_path`:
    the same file without the walk through ``/proc``; three settings files at every runtime's
    start). No file there (``FileNotFoundError``, ``NotADirectoryError``) or a directory
    (``IsADirectoryError``) is raised as is: every caller takes it for what it is, and names the
    host's path itself when it says so, never the error's; any other failure is asked again of
    the host's spelling, whose error is raised, as before."""
    try:
        with open(disk_path(path), encoding="utf-8") as handle:
            return handle.read()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise
    except OSError:
        pass
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@dataclass(frozen=True)
class TrustDecision:
    trusted: bool
    reason: str


def resolve_project_trust(
    cwd: str,
    agent_dir: str,
    *,
    approve: bool | None,
    interactive: bool = False,
    global_settings: Callable[[], dict[str, Any]] | None = None,
) -> TrustDecision:
    """Project trust as a non-interactive Pi (rpc/json/print) decides it at startup.

    ``global_settings``: what ``<agentDir>/settings.json`` holds, when the caller reads it
    anyway (:meth:`SettingsManager.create_trusting`); by default the file is read here."""
    if approve is not None:
        return TrustDecision(approve, "--approve" if approve else "--no-approve")
    stored = _stored_trust(agent_dir, cwd)
    requires = has_trust_requiring_resources(cwd)
    if not requires:
        return TrustDecision(True if stored is None else stored, "no trust-requiring project resources")
    if stored is not None:
        return TrustDecision(stored, "trust.json decision")
    values = (
        _read_json_object(os.path.join(agent_dir, "settings.json"))
        if global_settings is None
        else global_settings()
    )
    default = values.get("defaultProjectTrust", "ask")
    if default == "always":
        return TrustDecision(True, "defaultProjectTrust always")
    if default == "never":
        return TrustDecision(False, "defaultProjectTrust never")
    if interactive:
        return TrustDecision(False, "interactive trust prompt not answered")
    return TrustDecision(False, "defaultProjectTrust ask without an interactive prompt")


def _stored_trust(agent_dir: str, cwd: str) -> bool | None:
    """The nearest saved decision for ``cwd`` (trust-manager.js:25-40), None without one.

    ``cwd`` is resolved only once a decision is there to compare it with: most scenarios have
    no ``trust.json``, and resolving the host's project path (through the virtual root's
    ``/proc/self/fd`` link and every directory of the run's real path) was a fifth of deciding
    trust at each runtime's start."""
    data = _read_json_object(_trust_path(agent_dir))
    best: tuple[int, bool] | None = None
    target: str | None = None
    for key, value in data.items():
        decision = value.get("decision") if isinstance(value, dict) else value
        if not isinstance(decision, bool):
            continue
        if target is None:
            target = os.path.realpath(cwd)
        root = os.path.realpath(key)
        inside = target == root or target.startswith(root.rstrip("/") + "/")
        if inside and (best is None or len(root) > best[0]):
            best = (len(root), decision)
    return best[1] if best else None


def _read_json_object(path: str) -> dict[str, Any]:
    try:
        text = _open_text(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return {}
    try:
        value = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


@functools.lru_cache(maxsize=64)
def _trust_path(agent_dir: str) -> str:
    """``<agentDir>/trust.json`` (see :func:`_global_path`)."""
    return os.path.join(agent_dir, "trust.json")


@functools.lru_cache(maxsize=64)
def _global_path(agent_dir: str) -> str:
    """``<agentDir>/settings.json`` as ``pathlib`` spells it. Kept per directory (a pure
    function of a string): every runtime of every scenario names the same two files below the
    host's fixed root, and parsing them into ``Path`` objects anew was a third of reading the
    settings at a runtime's start (issue 16)."""
    return str(Path(agent_dir) / "settings.json")


@functools.lru_cache(maxsize=64)
def _project_path(cwd: str) -> str:
    """``<cwd>/<CONFIG_DIR_NAME>/settings.json`` as ``pathlib`` spells it (see :func:`_global_path`)."""
    return str(Path(cwd) / CONFIG_DIR_NAME / "settings.json")


@dataclass
class SettingsManager:
    """The merged settings of one runtime, read from disk at creation and on reload."""

    cwd: str
    agent_dir: str
    project_trusted: bool
    global_settings: dict[str, Any] = field(default_factory=dict)
    project_settings: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    #: The global file could not be read as JSON at creation or reload (``globalSettingsLoadError``):
    #: :meth:`_save_global` then writes nothing (settings-manager.js:474-479).
    global_load_failed: bool = False
    #: Global fields changed in memory and not written yet, each with its changed nested keys
    #: (``modifiedFields``/``modifiedNestedFields``, settings-manager.js:393-401; none: the
    #: whole field is written).
    _modified: dict[str, set[str]] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: What :meth:`get_compaction_settings` (by model id) and :meth:`get_retry_settings` (key
    #: ``_RETRY``) answered, for the two dicts in ``_memo_of`` (see :meth:`_memo`).
    _answers: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _memo_of: tuple[dict[str, Any], dict[str, Any]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def global_path(self) -> str:
        return _global_path(self.agent_dir)

    @property
    def project_path(self) -> str:
        return _project_path(self.cwd)

    @classmethod
    def create(cls, cwd: str, agent_dir: str, *, project_trusted: bool) -> SettingsManager:
        manager = cls(cwd=cwd, agent_dir=agent_dir, project_trusted=project_trusted)
        manager.reload()
        return manager

    @classmethod
    def create_trusting(
        cls, cwd: str, agent_dir: str, *, approve: bool | None
    ) -> tuple[TrustDecision, SettingsManager]:
        """:func:`resolve_project_trust`, then :meth:`create` with its decision, as a runtime
        starts (main.js:652-658, then the settings manager), reading the global settings file
        once for both: the trust decision's ``defaultProjectTrust`` is read from the manager's
        own reading. Both readings give the same object for every content (missing, a
        directory, empty, not JSON, not an object: ``{}``), and the file is read at the same
        point as before (when trust needs it, else where the manager read it), so an error
        reading it is raised where it was."""
        manager = cls(cwd=cwd, agent_dir=agent_dir, project_trusted=False)
        read: list[dict[str, Any]] = []

        def global_settings() -> dict[str, Any]:
            if not read:
                read.append(manager._load(manager.global_path, "global"))
            return read[0]

        trust = resolve_project_trust(cwd, agent_dir, approve=approve, global_settings=global_settings)
        manager.project_trusted = trust.trusted
        manager.global_settings = global_settings()
        manager.global_load_failed = bool(manager.errors)
        manager.project_settings = manager._load(manager.project_path, "project") if trust.trusted else {}
        return trust, manager

    def reload(self) -> None:
        """Re-read both files (``/reload``, ``ctx.reload()``)."""
        self.errors = []
        self.global_settings = self._load(self.global_path, "global")
        self.global_load_failed = bool(self.errors)
        self.project_settings = self._load(self.project_path, "project") if self.project_trusted else {}

    def _load(self, path: str, scope: str) -> dict[str, Any]:
        try:
            text = _open_text(path)  # ``Path.read_text`` without the ``Path``
        except (FileNotFoundError, NotADirectoryError):
            return {}
        except IsADirectoryError:
            self.errors.append(f"{scope} settings: {path} is a directory")
            return {}
        if not text:
            return {}
        try:
            # ``JSON.parse``: ``4000.0`` is the number 4000, an integer to a Python extension.
            value = _parse_js_json(text.lstrip("\ufeff"))
        except json.JSONDecodeError as error:
            self.errors.append(f"{scope} settings: {path}: {error}")
            return {}
        # ``loadFromStorage`` migrates what it read (settings-manager.js:257-271): an extension's
        # ``getSettings()`` and every reading see ``steeringMode`` for a legacy ``queueMode``.
        # A JSON value other than an object or an array fails the migration's ``in`` checks
        # (a load error); an array loads (:func:`_as_object`).
        try:
            migrated: dict[str, Any] = _as_object(_migrated(value))
        except TypeError as error:
            self.errors.append(f"{scope} settings: {path}: {error}")
            return {}
        return migrated

    @property
    def settings(self) -> dict[str, Any]:
        """``deepMergeSettings(global, project)``, its keys in JavaScript's order
        (:func:`_js_key_order`: a project key ``"7"`` the global file lacks comes first)."""
        return _js_key_order(deep_merge(self.global_settings, self.project_settings))

    # ------------------------------------------------------------------ writes
    def set_compaction_enabled(self, enabled: bool) -> None:
        """``setCompactionEnabled`` (settings-manager.js:646-653; RPC ``set_auto_compaction``,
        agent-session.js:2758-2760): the *global* settings in memory at once, then the global
        file. A project file's ``compaction.enabled`` still wins in the merged settings."""
        self._set_global("compaction", "enabled", enabled)

    def get_steering_mode(self) -> Any:
        """``getSteeringMode``: ``settings.steeringMode || "one-at-a-time"`` (settings-manager.js:561-563)."""
        return self.settings.get("steeringMode") or "one-at-a-time"

    def get_follow_up_mode(self) -> Any:
        """``getFollowUpMode`` (settings-manager.js:569-571)."""
        return self.settings.get("followUpMode") or "one-at-a-time"

    def set_steering_mode(self, mode: str) -> None:
        """``setSteeringMode`` (settings-manager.js:564-568): a top-level global key."""
        self._set_global_key("steeringMode", mode)

    def set_follow_up_mode(self, mode: str) -> None:
        """``setFollowUpMode`` (settings-manager.js:572-576)."""
        self._set_global_key("followUpMode", mode)

    def set_retry_enabled(self, enabled: bool) -> None:
        """``setRetryEnabled`` (settings-manager.js:697-704; RPC ``set_auto_retry``)."""
        self._set_global("retry", "enabled", enabled)

    def _set_global(self, name: str, key: str, value: Any) -> None:
        """``if (!global[name]) global[name] = {}; global[name][key] = value; markModified; save()``.
        A new dict replaces the old one (the answers are remembered per dict, :meth:`_memo`).
        A section holding a truthy string, number or ``true`` makes the assignment throw V8's
        TypeError (:class:`SettingsError`, its message); an array is not modelled."""
        section = self.global_settings.get(name)
        if not section:  # JavaScript's falsy values: missing, null, false, 0, ""
            section = {}
        elif isinstance(section, (str, int, float)):
            # A truthy primitive: the assignment throws (ES modules are strict), before anything
            # is marked or saved; RPC answers the command with the error (rpc-mode.js:653-655).
            kind = (
                "boolean" if isinstance(section, bool) else "string" if isinstance(section, str) else "number"
            )
            raise SettingsError(f"Cannot create property '{key}' on {kind} '{js_string(section)}'")
        elif not isinstance(section, dict):
            raise SettingsWriteNotModelledError(
                f"setting {name}.{key} where {name} is {js_string(section)} is not modelled by the simulator"
            )
        self.global_settings = {**self.global_settings, name: {**section, key: value}}
        self._modified.setdefault(name, set()).add(key)
        self._save_global()

    def _set_global_key(self, name: str, value: Any) -> None:
        """``global[name] = value; markModified(name); save()``: the whole key is written."""
        self.global_settings = {**self.global_settings, name: value}
        self._modified.setdefault(name, set())
        self._save_global()

    def _save_global(self) -> None:
        """``save()`` then ``persistScopedSettings("global", ...)`` (settings-manager.js:449-483):
        the file as it is *now* (read again, its BOM stripped, migrated), with each modified
        nested key taken from memory, written as ``JSON.stringify(settings, null, 2)`` (no
        final newline); nothing when the file failed to load, and an error recorded (the file
        kept, the fields still modified) when it is no JSON any more.

        Pi queues the write on a promise (``enqueueWrite``) and takes a lock file
        (``<file>.lock``) around it; here it happens at once and no lock file is made: nothing
        of the process runs between the two, and the lock is gone when the write ends."""
        if self.global_load_failed:
            return
        path = disk_path(self.global_path)
        current: str | None = None
        if os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as handle:
                    current = handle.read()
            except OSError as error:
                self.errors.append(f"global settings: {self.global_path}: {error}")
                return
        try:
            on_disk: Any = _migrated(_parse_js_json(current.lstrip("\ufeff"))) if current else {}
        except (ValueError, TypeError) as error:
            self.errors.append(f"global settings: {self.global_path}: {error}")
            return
        merged = _as_object(on_disk)
        for name, keys in self._modified.items():
            value = self.global_settings.get(name)
            if keys and isinstance(value, dict):
                base = merged.get(name)
                nested = dict(base) if isinstance(base, dict) else {}
                for key in keys:
                    nested[key] = value.get(key)
                merged[name] = nested
            else:
                merged[name] = value
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(merged, indent=2, ensure_ascii=False))
        self._modified.clear()

    def get_settings(self) -> dict[str, Any]:
        """``pi.getSettings()``: a copy of the merged settings (:func:`_copy_json`)."""
        copied: dict[str, Any] = _copy_json(self.settings)
        return copied

    def is_project_trusted(self) -> bool:
        return self.project_trusted

    def get_compaction_enabled(self, merged: dict[str, Any] | None = None) -> bool:
        """``merged``: :attr:`settings`, when the caller has merged them already."""
        value = _field(self.settings if merged is None else merged, "compaction", "enabled")
        return bool(_DEFAULTS["enabled"]) if value is None or value is _MISSING else bool(value)

    def _token_setting(self, name: str, model: Model | None, merged: dict[str, Any] | None = None) -> int:
        """``getCompactionTokenSetting``: only a *missing* value falls back; a JSON ``null`` is
        invalid like any other non-integer (Pi tests ``!== undefined``). ``merged``: as for
        :meth:`get_compaction_enabled`."""
        settings = self.settings if merged is None else merged
        compaction = settings.get("compaction")
        ordinary = _field(settings, "compaction", name)
        if ordinary is not _MISSING and not _non_negative_safe_int(ordinary):
            raise SettingsError(
                f"Invalid compaction.{name} setting: {js_string(ordinary)}. "
                "Expected a non-negative safe integer."
            )
        override: Any = _MISSING
        if model is not None:
            key = model.full_id
            entry = _field(compaction, "modelOverrides", key)
            if entry is not _MISSING and not isinstance(entry, dict):
                raise SettingsError(
                    f'Invalid compaction.modelOverrides["{key}"] setting: {js_string(entry)}. '
                    "Expected an object."
                )
            override = _field(entry, name)
            if override is not _MISSING and not _non_negative_safe_int(override):
                raise SettingsError(
                    f'Invalid compaction.modelOverrides["{key}"].{name} setting: {js_string(override)}. '
                    "Expected a non-negative safe integer."
                )
        if override is not _MISSING:
            return int(override)
        if ordinary is not _MISSING:
            return int(ordinary)
        return int(_DEFAULTS[name])

    def get_compaction_settings(self, model: Model | None) -> CompactionSettings:
        """``getCompactionSettings(model)``; raises :class:`SettingsError` on invalid values.

        The two files are merged once for the three values (each read merged them anew, twice
        for a token setting: five deep merges a call, and it is called before every turn and
        compaction check, 3 % of a Pi Session Continuity exploration, issue 16)."""
        answers = self._memo()
        key = None if model is None else model.full_id
        known: CompactionSettings | None = answers.get(key)
        if known is None:
            merged = self.settings
            known = CompactionSettings(
                enabled=self.get_compaction_enabled(merged),
                reserve_tokens=self._token_setting("reserveTokens", model, merged),
                keep_recent_tokens=self._token_setting("keepRecentTokens", model, merged),
            )
            answers[key] = known
        return known

    def get_retry_settings(self) -> dict[str, Any]:
        """``getRetrySettings``: each value ``?? default`` (a ``null`` takes the default too).
        A new dict at each call (remembered as in :meth:`get_compaction_settings`)."""
        answers = self._memo()
        known: dict[str, Any] | None = answers.get(_RETRY)
        if known is None:
            known = {}
            merged = self.settings  # once, not once per key (issue 16)
            for key, default in _RETRY_DEFAULTS.items():
                value = _field(merged, "retry", key)
                known[key] = default if value is None or value is _MISSING else value
            answers[_RETRY] = known
        return dict(known)

    def _memo(self) -> dict[Any, Any]:
        """The answers remembered for the settings as they are: a pure function of the two
        dicts (and of the model's id), which are read whole at creation and on :meth:`reload`
        and replaced then, never changed in place (Pi's settings are not hot-reloaded, §9.19).
        Asked before every turn, at every compaction check and by every retry decision, the
        answers were worked out anew each time: five deep merges of the two files' dicts a
        compaction setting, 0.7 % of a run of the suite (issue 16). The memo holds the dicts it
        was made for, so an identity compared is never a freed object's; the answers of an
        invalid setting (:class:`SettingsError`) are not remembered: each read raises anew."""
        memo_of = self._memo_of
        if (
            memo_of is None
            or memo_of[0] is not self.global_settings
            or memo_of[1] is not self.project_settings
        ):
            self._memo_of = (self.global_settings, self.project_settings)
            self._answers = {}
        elif len(self._answers) >= _ANSWERS_LIMIT:
            self._answers.clear()
        return self._answers


def _parse_js_json(text: str) -> Any:
    """``JSON.parse``: one kind of number, so ``1.0`` reads as ``1`` (and is written back as
    ``1`` by ``JSON.stringify``), as the bridge reads numbers (:func:`.json_copy.js_json_number`);
    each object's keys in JavaScript's order (:func:`.json_copy.js_object`)."""
    return js_loads(text)


def _js_key_order(value: dict[str, Any]) -> dict[str, Any]:
    """:func:`.json_copy.js_ordered` of ``value`` and of every object nested in it (through
    objects only: what :func:`deep_merge` builds)."""
    ordered = js_ordered(value)
    for key, item in ordered.items():
        if type(item) is dict:
            nested = _js_key_order(item)
            if nested is not item:
                ordered = ordered if ordered is not value else dict(ordered)
                ordered[key] = nested
    return ordered


def _as_object(settings: Any) -> dict[str, Any]:
    """The settings object Pi works with for what a file held after the migration: an object
    itself; an array as the object its indexes make (``{"0": a, "1": b}``: Pi keeps the array,
    and every reading of it goes through an object spread, ``{ ...globalSettings }`` in
    ``deepMergeObjects`` and ``{ ...currentFileSettings }`` in ``persistScopedSettings``,
    settings-manager.js:19-32, :449-473, which copies just those keys; a key Pi adds to the
    array in memory, ``compaction``, is kept by both). ``{}`` for anything else (no content)."""
    if isinstance(settings, dict):
        return settings
    if isinstance(settings, list):
        return {str(index): item for index, item in enumerate(settings)}
    return {}


def _migrated(settings: Any) -> Any:
    """``SettingsManager.migrateSettings`` (settings-manager.js:281-327), which Pi applies to the
    file it writes over: ``queueMode`` to ``steeringMode``, ``websockets`` to ``transport``, the
    old ``skills`` object to its list, ``retry.maxDelayMs`` to ``retry.provider.maxRetryDelayMs``.
    A JSON value other than an object or a list makes Pi's ``in`` checks throw (TypeError)."""
    if not isinstance(settings, (dict, list)):
        raise TypeError(f"Cannot use 'in' operator to search for 'queueMode' in {js_string(settings)}")
    if not isinstance(settings, dict):
        return settings
    if "queueMode" in settings and "steeringMode" not in settings:
        settings["steeringMode"] = settings.pop("queueMode")
    if "transport" not in settings and isinstance(settings.get("websockets"), bool):
        settings["transport"] = "websocket" if settings.pop("websockets") else "sse"
    skills = settings.get("skills")
    if isinstance(skills, dict):
        enable = skills.get("enableSkillCommands", _MISSING)
        if enable is not _MISSING and settings.get("enableSkillCommands", _MISSING) is _MISSING:
            settings["enableSkillCommands"] = enable
        custom = skills.get("customDirectories")
        if isinstance(custom, list) and custom:
            settings["skills"] = custom
        else:
            del settings["skills"]
    retry = settings.get("retry")
    if isinstance(retry, dict):
        provider = retry.get("provider") if isinstance(retry.get("provider"), dict) else None
        max_delay = retry.get("maxDelayMs")
        if (
            isinstance(max_delay, (int, float))
            and not isinstance(max_delay, bool)
            and (provider is None or provider.get("maxRetryDelayMs") is None)
        ):
            retry["provider"] = {**(provider or {}), "maxRetryDelayMs": max_delay}
        retry.pop("maxDelayMs", None)
    return settings


def _copy_json(value: Any) -> Any:
    """``copy.deepcopy(value)`` for settings read from JSON: new objects and arrays, the same
    strings and numbers. ``deepcopy``'s memo and dispatch were most of each ``getSettings()``
    (every runtime's extensions ask at ``session_start``); ``json.loads`` never shares an
    object between two places, nor does :func:`deep_merge` of two files, so there is no
    sharing for the memo to keep. Anything else (a manager given other values) is copied by
    ``deepcopy`` as before."""
    kind = type(value)
    if kind is dict:
        return {key: _copy_json(item) for key, item in value.items()}
    if kind is list:
        return [_copy_json(item) for item in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)


#: :meth:`SettingsManager._memo`'s key of the retry settings (a model id is a string or None).
_RETRY = ("retry",)
#: How many answers :meth:`SettingsManager._memo` keeps (one per model asked about, and the retry
#: settings): a bound, never reached by a session's few models.
_ANSWERS_LIMIT = 64


#: A key that is not there (JavaScript ``undefined``), as opposed to a JSON ``null``.
_MISSING: Any = object()


def _field(value: Any, *path: str) -> Any:
    """``value?.[a]?.[b]…``: :data:`_MISSING` where a step is not an object or has no such key."""
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _non_negative_safe_int(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and float(value).is_integer()
        and 0 <= value <= 2**53 - 1
    )
