"""The HTML report draws YAML from records (a Brief's frontmatter, an explorer's minimised
scenario, read for a chart's limits) without expanding aliases: a few lines of them can stand for billions of values or
contain themselves, and drawing walks the data. A record is shared data, so a hostile one gets
a message on the page, not a report that never finishes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from pi_continuity_harness.report import render_run
from pi_continuity_harness.report.data import load_yaml_without_aliases, read_artifact

from .conftest import copy_run

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_yaml_without_aliases_loads_as_safe_load_does() -> None:
    text = "kind: checkpoint\nsession: s1\nitems: [1, two, {three: 3}]\n"
    assert load_yaml_without_aliases(text) == yaml.safe_load(text)
    typed = "when: 2024-01-01\nat: 2024-01-01T10:00:00Z\nn: 0x1f\nyes: on\nnone: ~\nf: 1e3\ns: !!set {a, b}\n"
    assert load_yaml_without_aliases(typed) == yaml.safe_load(typed)  # the safe constructors' types


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)


@given(
    st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=20,
    )
)
def test_any_data_written_as_yaml_loads_back_as_safe_load_reads_it(data: Any) -> None:
    """libyaml (``CSafeLoader``) reads what the pure-Python ``yaml.safe_load`` reads."""
    text = yaml.safe_dump(data, allow_unicode=True)
    assert load_yaml_without_aliases(text) == yaml.safe_load(text)


@pytest.mark.parametrize("text", [BOMB, "loop: &l [1, *l]\n", "a: &x 1\nb: *x\n"])
def test_a_document_with_an_alias_is_refused_naming_it(text: str) -> None:
    with pytest.raises(yaml.YAMLError, match=r"uses the YAML alias \*\w+, which the report does not expand"):
        load_yaml_without_aliases(text)


def test_a_brief_whose_frontmatter_uses_aliases_is_drawn_with_the_reason(tmp_path: Path) -> None:
    brief = tmp_path / "brief.md"
    brief.write_text(f"---\n{BOMB}---\n# Brief\n", encoding="utf-8")
    artifact = read_artifact(brief, tmp_path)
    assert artifact.frontmatter_error is not None and "uses the YAML alias *a" in artifact.frontmatter_error
    assert artifact.body == "# Brief\n"


def test_a_run_whose_brief_frontmatter_uses_aliases_renders_with_the_reason(
    small_run: dict[str, Any], tmp_path: Path
) -> None:
    """Before: the page drew the frontmatter's values as JSON, expanding 387 million strings
    (the render did not finish); now the Brief is drawn with the reason instead."""
    run = copy_run(small_run, tmp_path)
    failing = next(a for a in run["record"]["assertions"] if a["status"] == "failed")
    brief = Path(failing["observed"]["workdir"]) / "project" / ".pi" / "session-continuity" / "b" / "bomb.md"
    brief.parent.mkdir(parents=True)
    brief.write_text(f"---\n{BOMB}---\n# Continuity Brief\n", encoding="utf-8")
    failing["observed"]["artifacts"].append(str(brief))
    page = render_run(run["record"])
    assert "the frontmatter is refused: uses the YAML alias *a, which the report does not expand" in page
