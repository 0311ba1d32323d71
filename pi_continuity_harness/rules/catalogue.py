"""The rule catalogue of each system: typed, validated, loaded from the package's YAML.

One YAML file per system (``psc.yaml``, ``blitz.yaml`` beside this module) lists every atomic,
testable rule of the system's product document (issue 10 item 1): its id, the section it comes
from, its text, the sentence of the document it rests on, what makes it observable, and its
kind. A *behaviour* rule is checked against any implementation by a feature scenario tagged
``@rule-<id>`` or an explorer invariant that declares it, and broken by at least one mutant; a
*static* rule can only be checked by reading the implementation's source or documents, so it
names the test that does (``check``) and, where no mutant could break it, says why
(``no_mutant``). A behaviour rule that no scenario or invariant can check yet says why
(``unchecked``, with the reference's unit test in ``unit`` where one exists): it is reported as
unchecked, never silently counted as covered.

Loading is strict: an unknown key, a duplicate id, an id of the other system, a check on a
behaviour rule are errors naming the file and the rule (:class:`RuleCatalogueError`). A static
rule without its check loads, and :mod:`.coverage` reports it as unchecked.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pi_continuity_harness.cache_dir import kept
from pi_continuity_harness.errors import HarnessError

__all__ = [
    "CATALOGUE_DIR",
    "CATALOGUE_FILES",
    "Catalogue",
    "Rule",
    "RuleCatalogueError",
    "catalogue_for_rule",
    "load_catalogue",
    "parse_catalogue",
    "systems",
]

CATALOGUE_DIR = Path(__file__).resolve().parent
#: System name -> its catalogue file (beside this module) and the prefix of its rule ids.
CATALOGUE_FILES: dict[str, tuple[str, str]] = {
    "pi-session-continuity": ("psc.yaml", "P"),
    "pi-blitz-handoff": ("blitz.yaml", "H"),
}

_ID = re.compile(r"^[A-Z]\d+[a-z]?$")


class RuleCatalogueError(HarnessError, ValueError):
    """A catalogue file that cannot be used; the message names the file and the rule or field."""


class Rule(BaseModel):
    """One atomic rule of a system's product document."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ID.pattern)
    section: str = Field(min_length=1)
    text: str = Field(min_length=1)
    #: The words of the product document the rule rests on.
    quote: str = ""
    #: Where the quote comes from when it is not the product document itself.
    quote_source: str = ""
    #: What an observer (a step, an invariant) sees when the rule holds or breaks.
    observable: str = ""
    kind: Literal["behaviour", "static"]
    #: ``kept``, ``split of <checklist id>``, ``added``, ...: where the rule came from.
    origin: str = ""
    #: Static rules: the test that checks the rule by reading source (``path::test_name``).
    check: str | None = None
    #: Static rules only: why no mutant can break the rule (a mutant is then not required).
    no_mutant: str | None = None
    #: Behaviour rules: why no scenario or invariant checks the rule against any implementation
    #: (it is then reported as unchecked with this reason, not as a problem, and needs no mutant).
    unchecked: str | None = Field(default=None, min_length=1)
    #: With ``unchecked``: the unit test of the reference that checks the rule (``path::test``);
    #: a unit test never counts as a check of another implementation.
    unit: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _static_fields(self) -> Rule:
        if self.kind == "behaviour" and self.check:
            raise ValueError(
                f"{self.id}: check names a static check; a behaviour rule is checked by features"
            )
        if self.no_mutant is not None and self.kind != "static":
            raise ValueError(f"{self.id}: only a static rule may go without a mutant (no_mutant)")
        if self.unchecked is not None and self.kind != "behaviour":
            raise ValueError(f"{self.id}: unchecked is for behaviour rules; a static rule names its check")
        if self.unit is not None and self.unchecked is None:
            raise ValueError(f"{self.id}: unit names the unit test of a rule marked unchecked (say why)")
        return self


class Catalogue(BaseModel):
    """Every rule of one system, in document order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str
    source: str
    checklist: str = ""
    #: Checklist rules folded into others: ``{old: where it went}`` (traceability only).
    merged: dict[str, str] = Field(default_factory=dict)
    rules: tuple[Rule, ...]

    def ids(self) -> tuple[str, ...]:
        return tuple(rule.id for rule in self.rules)

    def get(self, rule_id: str) -> Rule | None:
        return self._by_id().get(rule_id)

    def __contains__(self, rule_id: object) -> bool:
        return isinstance(rule_id, str) and rule_id in self._by_id()

    def _by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}


def parse_catalogue(data: object, origin: str, *, system: str | None = None) -> Catalogue:
    """A catalogue from parsed YAML; ``origin`` (a file name) is named in every error."""
    try:
        catalogue = Catalogue.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        rules = data.get("rules") if isinstance(data, dict) else None
        loc = first["loc"]
        if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int) and isinstance(rules, list):
            entry = rules[loc[1]] if loc[1] < len(rules) else None
            if isinstance(entry, dict) and "id" in entry:
                where = f"rule {entry['id']} ({where})"
        raise RuleCatalogueError(f"{origin}: {where}: {first['msg']}") from None
    expected = system or catalogue.system
    if catalogue.system != expected:
        raise RuleCatalogueError(f"{origin}: system is {catalogue.system!r}, expected {expected!r}")
    prefix = CATALOGUE_FILES.get(catalogue.system, ("", ""))[1]
    seen: set[str] = set()
    for rule in catalogue.rules:
        if rule.id in seen:
            raise RuleCatalogueError(f"{origin}: rule {rule.id} is listed twice")
        seen.add(rule.id)
        if prefix and not rule.id.startswith(prefix):
            raise RuleCatalogueError(
                f"{origin}: rule {rule.id}: ids of {catalogue.system} start with {prefix!r}"
            )
    if not catalogue.rules:
        raise RuleCatalogueError(f"{origin}: rules: the catalogue lists no rule")
    return catalogue


def systems() -> tuple[str, ...]:
    """Every system with a catalogue."""
    return tuple(CATALOGUE_FILES)


@cache
def load_catalogue(system: str) -> Catalogue:
    """The catalogue of ``system`` (read once per process)."""
    if system not in CATALOGUE_FILES:
        raise RuleCatalogueError(
            f"no rule catalogue for system {system!r} (known: {', '.join(CATALOGUE_FILES)})"
        )
    path = CATALOGUE_DIR / CATALOGUE_FILES[system][0]
    try:
        text = path.read_text(encoding="utf-8")
        data = kept(
            _YAML_CACHE, [f"PyYAML {yaml.__version__}".encode(), text.encode()], lambda: _parse(text), _usable
        )
    except (OSError, yaml.YAMLError) as error:
        raise RuleCatalogueError(f"{path}: {error}") from None
    return parse_catalogue(data, str(path), system=system)


#: Where the parsed YAML of a catalogue is kept between processes, under the harness's cache
#: (:func:`~pi_continuity_harness.cache_dir.kept`): every process that runs the suite registers
#: a marker per rule of each system (``features/pytest_plugin.py``, ``pytest_configure``), and
#: PyYAML's constructor (in Python, even under ``CSafeLoader``) took 0.03 CPU-s of each for the
#: two files; loading the kept data takes 0.001 (issue 16). The catalogue is still validated
#: (:func:`parse_catalogue`) in every process.
_YAML_CACHE = "rules"


def _parse(text: str) -> object:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _usable(data: object) -> bool:
    """A kept catalogue is a mapping (anything else is parsed again, and refused as it was)."""
    return isinstance(data, dict)


def catalogue_for_rule(rule_id: str) -> Catalogue | None:
    """The catalogue whose rules include ``rule_id`` (None: no system has it)."""
    for system in CATALOGUE_FILES:
        catalogue = load_catalogue(system)
        if rule_id in catalogue:
            return catalogue
    return None
