"""The stock suite's feature files are parsed once per cache directory (``preflight._gherkin_document``):
a later process loads the kept document, which is the one Gherkin's parser gives."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_bdd.exceptions import GherkinParseError
from pytest_bdd.gherkin_parser import GherkinDocument, get_gherkin_document

from pi_continuity_harness.features import SUITE_DIR, preflight

FEATURE = sorted((SUITE_DIR / "pi_session_continuity" / "smoke").glob("*.feature"))[0]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CONTINUITY_HARNESS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()  # kept only in a cache directory that is there
    return tmp_path / "cache" / preflight.DOCUMENT_CACHE


def test_a_stock_feature_is_kept_and_read_back_as_parsed(cache: Path) -> None:
    def parse() -> GherkinDocument:
        raise AssertionError("a stock feature is parsed from the bytes it is kept under")

    first = preflight._gherkin_document(str(FEATURE), preflight.FEATURE_ENCODING, parse)
    assert len(list(cache.iterdir())) == 1
    again = preflight._gherkin_document(str(FEATURE), preflight.FEATURE_ENCODING, parse)
    assert again == first == get_gherkin_document(str(FEATURE), preflight.FEATURE_ENCODING)
    assert again is not first


def test_a_document_is_kept_under_the_bytes_it_was_parsed_from(cache: Path) -> None:
    """A file that changes after its bytes were read (the key) and before pytest-bdd's own
    reading (``parse``) is not kept under the older bytes with the newer document: the kept
    document is the one of the key's bytes."""
    other = sorted((SUITE_DIR / "pi_session_continuity" / "smoke").glob("*.feature"))[1]

    def parse_as_changed() -> GherkinDocument:
        return get_gherkin_document(str(other), preflight.FEATURE_ENCODING)

    preflight._gherkin_document(str(FEATURE), preflight.FEATURE_ENCODING, parse_as_changed)
    again = preflight._gherkin_document(str(FEATURE), preflight.FEATURE_ENCODING, parse_as_changed)
    assert again == get_gherkin_document(str(FEATURE), preflight.FEATURE_ENCODING)


def test_a_stock_feature_that_does_not_parse_gets_pytest_bdds_error_and_nothing_is_kept(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = SUITE_DIR / "pi_session_continuity" / "smoke" / "zz-broken.feature"
    real_read_bytes = Path.read_bytes
    monkeypatch.setattr(
        Path,
        "read_bytes",
        lambda self: (
            b"Feature: x\n  Scenario: y\n    Given a\n  @tag\n" if self == broken else real_read_bytes(self)
        ),
    )
    errors: list[str] = []

    def parse() -> GherkinDocument:
        errors.append("pytest-bdd's own reading")
        raise GherkinParseError("its message", 3, "Given", str(broken))

    with pytest.raises(GherkinParseError, match="its message"):
        preflight._gherkin_document(str(broken), preflight.FEATURE_ENCODING, parse)
    assert errors == ["pytest-bdd's own reading"]
    assert not cache.exists() or not list(cache.iterdir())


def test_an_unreadable_kept_document_is_parsed_again_and_replaced(cache: Path) -> None:
    preflight.read_feature(FEATURE)
    (kept,) = cache.iterdir()
    kept.write_bytes(b"not a pickle")
    feature = preflight.read_feature(FEATURE)
    assert feature.scenarios
    assert kept.read_bytes() != b"not a pickle"


def test_a_feature_of_your_own_is_not_kept(cache: Path, tmp_path: Path) -> None:
    own = tmp_path / "own.feature"
    own.write_text(FEATURE.read_text(encoding="utf-8"), encoding="utf-8")
    preflight.read_feature(own)
    assert not cache.exists()
