"""Pi 1.6's built-in ``read``, ``write`` and ``edit`` tools in the simulator, one test per behaviour.

Every expected value here is real Pi's: ``tests/realpi/test_differential_file_tools.py`` plays
these calls on Pi 1.6 and on the simulator and finds them equal, and
``tests/realpi/test_edit_diff_matches_node.py`` runs the edit functions against Pi's own
``edit-diff.js``. These tests run without Node, so a change that breaks a rule fails here first.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from pi_continuity_harness.simulator.active_tools import core_tools
from pi_continuity_harness.simulator.builtin_tools import BuiltinTools, ToolError
from pi_continuity_harness.simulator.edit_tool import (
    apply_edits_to_normalized_content,
    generate_edit_diff,
    prepare_edit_arguments,
)
from pi_continuity_harness.simulator.js_diff import diff_lines, format_patch, structured_patch
from pi_continuity_harness.simulator.read_image import ImageNotModelledError, detect_image_mime, read_image
from pi_continuity_harness.simulator.read_tool import read_text
from pi_continuity_harness.simulator.tool_arguments import validate_arguments
from pi_continuity_harness.simulator.tool_paths import resolve_read_path, resolve_to_cwd


def _write(path: str, content: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(content)


def _tools(tmp_path: Path) -> BuiltinTools:
    return BuiltinTools(
        cwd=str(tmp_path), scripted_output=lambda _id: None, write_file=_write, remove_file=os.remove
    )


def _run(tmp_path: Path, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return _tools(tmp_path).run({"id": "c", "name": name, "arguments": args}).result


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# ================================================================ write (write.js:27-55)
def test_write_creates_parent_directories_and_names_the_path_as_given(tmp_path: Path) -> None:
    result = _run(tmp_path, "write", {"path": "sub/dir/a.txt", "content": "one\n"})
    assert result == {"content": [{"type": "text", "text": "Successfully wrote to sub/dir/a.txt"}]}
    assert (tmp_path / "sub" / "dir" / "a.txt").read_text(encoding="utf-8") == "one\n"


def test_a_path_is_resolved_as_pis_resolve_to_cwd(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    assert resolve_to_cwd("@at.txt", cwd) == f"{cwd}/at.txt"
    assert resolve_to_cwd("./sub/../b.txt", cwd) == f"{cwd}/b.txt"
    assert resolve_to_cwd("a\u00a0b.txt", cwd) == f"{cwd}/a b.txt"
    assert resolve_to_cwd("file:///x/a%20b.txt", cwd) == "/x/a b.txt"
    assert resolve_to_cwd("//x//y/", cwd) == "/x/y"


def test_a_read_of_a_missing_name_tries_the_macos_screenshot_spellings(tmp_path: Path) -> None:
    (tmp_path / "Shot 1.02.03\u202fPM.png").write_text("x", encoding="utf-8")
    found = resolve_read_path("Shot 1.02.03 PM.png", str(tmp_path), os.path.exists)
    assert found == f"{tmp_path}/Shot 1.02.03\u202fPM.png"


# ================================================================ read (read.js:230-270, truncate.js)
_THREE = b"one\ntwo\nthree\n"


def test_read_returns_the_lines_from_offset_with_the_continuation_notice() -> None:
    assert (
        _text(read_text("a.txt", _THREE, 2, 1)) == "two\n\n[2 more lines in file. Use offset=3 to continue.]"
    )
    assert _text(read_text("a.txt", _THREE, None, None)) == "one\ntwo\nthree\n"
    assert read_text("a.txt", _THREE, None, None)["structuredContent"] == "one\ntwo\nthree\n"


def test_read_fails_an_offset_past_the_end_counting_the_empty_last_line() -> None:
    with pytest.raises(Exception, match=r"^Offset 50 is beyond end of file \(4 lines total\)$"):
        read_text("a.txt", _THREE, 50, None)


def test_read_truncates_at_2000_lines_and_says_where_to_continue() -> None:
    result = read_text("long.txt", "".join(f"line {i}\n" for i in range(1, 2101)).encode(), None, None)
    assert _text(result).endswith("line 2000\n\n[Showing lines 1-2000 of 2101. Use offset=2001 to continue.]")
    truncation = result["details"]["truncation"]
    assert (truncation["truncatedBy"], truncation["totalLines"], truncation["outputLines"]) == (
        "lines",
        2100,
        2000,
    )


def test_read_truncates_at_50_kb_of_whole_lines() -> None:
    wide = "".join(f"{i:04d} " + "x" * 95 + "\n" for i in range(600)).encode()
    assert _text(read_text("wide.txt", wide, 3, None)).endswith(
        "\n\n[Showing lines 3-508 of 601 (50.0KB limit). Use offset=509 to continue.]"
    )


def test_read_of_a_first_line_over_50_kb_points_at_bash() -> None:
    assert _text(read_text("one.txt", b"y" * 60_000, None, None)) == (
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' one.txt | head -c 51200]"
    )


def test_read_keeps_crlf_and_a_bom(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    assert _text(_run(tmp_path, "read", {"path": "c.txt"})) == "\ufeffa\r\nb\r\n"


def test_read_of_a_missing_file_is_nodes_access_error(tmp_path: Path) -> None:
    with pytest.raises(
        ToolError, match=f"^ENOENT: no such file or directory, access '{tmp_path}/missing.txt'$"
    ):
        _run(tmp_path, "read", {"path": "missing.txt"})


def test_read_of_a_directory_fails_as_the_image_sniff_reads_it(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    with pytest.raises(ToolError, match=r"^EISDIR: illegal operation on a directory, read$"):
        _run(tmp_path, "read", {"path": "sub"})


# ================================================================ arguments (validation.js:49-61)
def _validate(name: str, args: dict[str, Any]) -> tuple[Any, str | None]:
    return validate_arguments(name, core_tools()[name].declaration["parameters"], args)


def test_arguments_are_coerced_to_the_schemas_types() -> None:
    assert _validate("read", {"path": "a", "offset": "2"}) == ({"path": "a", "offset": 2}, None)
    assert _validate("write", {"path": "a", "content": 5}) == ({"path": "a", "content": "5"}, None)
    assert _validate("read", {"path": "a", "offset": None}) == ({"path": "a"}, None)


def test_a_missing_or_mistyped_argument_fails_with_pis_message() -> None:
    assert (
        _validate("read", {})[1]
        == 'Validation failed for tool "read":\n  - path: missing\n\nReceived arguments:\n{}'
    )
    assert _validate("read", {"path": "a", "offset": "many"})[1] == (
        'Validation failed for tool "read":\n  - offset: expected number, got string\n\n'
        'Received arguments:\n{\n  "path": "a",\n  "offset": "many"\n}'
    )
    problem = _validate("edit", {"path": "a", "edits": [{"oldText": "x"}]})[1]
    assert problem is not None and problem.startswith(
        'Validation failed for tool "edit":\n  - edits.0.newText: missing\n'
    )


def test_edit_arguments_are_prepared_in_place_before_the_check() -> None:
    """prepareEditArguments (edit.js:41-66) sets ``args.edits`` on the call's own arguments."""
    as_string: dict[str, Any] = {"path": "a", "edits": '[{"oldText": "x", "newText": "y"}]'}
    assert prepare_edit_arguments(as_string) is as_string
    assert as_string["edits"] == [{"oldText": "x", "newText": "y"}]
    single: dict[str, Any] = {"path": "a", "edits": {"oldText": "x", "newText": "y"}}
    prepare_edit_arguments(single)
    assert single["edits"] == [{"oldText": "x", "newText": "y"}]
    legacy = {"path": "a", "oldText": "x", "newText": "y"}
    assert prepare_edit_arguments(legacy) == {"path": "a", "edits": [{"oldText": "x", "newText": "y"}]}


# ================================================================ edit (edit.js:83-137, edit-diff.js)
def test_edit_replaces_the_one_match_and_reports_pis_diff_and_patch(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    result = _run(tmp_path, "edit", {"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}]})
    assert _text(result) == "Successfully replaced 1 block(s) in a.txt."
    assert result["details"] == {
        "diff": " 1 one\n-2 two\n+2 TWO\n 3 three",
        "patch": "--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        "firstChangedLine": 2,
    }
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "one\nTWO\nthree\n"


@pytest.mark.parametrize(
    ("content", "edits", "message"),
    [
        ("one\n", [("nope", "x")], "Could not find the exact text in f. The old text must match exactly"),
        (
            "one\n",
            [("one", "1"), ("nope", "x")],
            "Could not find edits[1] in f. The oldText must match exactly",
        ),
        ("x\nx\n", [("x", "y")], "Found 2 occurrences of the text in f. The text must be unique."),
        ("one\n", [("", "x")], "oldText must not be empty in f."),
        ("one\n", [("one", "one")], "No changes made to f. The replacement produced identical content."),
        ("one\ntwo\n", [("one\nt", "a"), ("two", "b")], "edits[0] and edits[1] overlap in f. Merge them"),
        ("a b\n", [(" ", "x")], "Found 3 occurrences of the text in f."),  # " " is "" once trimmed: split("")
    ],
)
def test_edit_fails_with_pis_message(content: str, edits: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(
        Exception, match="^" + message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")
    ):
        apply_edits_to_normalized_content(content, [{"oldText": o, "newText": n} for o, n in edits], "f")


def test_edit_of_a_missing_file_names_the_error_code(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"^Could not edit file: m\.txt\. Error code: ENOENT\.$"):
        _run(tmp_path, "edit", {"path": "m.txt", "edits": [{"oldText": "a", "newText": "b"}]})


def test_edit_keeps_crlf_line_ends_and_the_bom(tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma\r\n")
    _run(tmp_path, "edit", {"path": "c.txt", "edits": [{"oldText": "beta\ngamma", "newText": "B\nG\nextra"}]})
    assert (tmp_path / "c.txt").read_bytes() == b"\xef\xbb\xbfalpha\r\nB\r\nG\r\nextra\r\n"


def test_a_fuzzy_match_rewrites_only_the_lines_it_touches() -> None:
    content = "say \u201chello\u201d   \nit\u2019s \u2014 done\nkeep \u201cme\u201d  \n"
    _base, new, _r = apply_edits_to_normalized_content(
        content, [{"oldText": 'say "hello"\nit\'s - done', "newText": "said it"}], "f"
    )
    assert new == "said it\nkeep \u201cme\u201d  \n"


def test_a_far_second_edit_is_diffed_in_its_own_window() -> None:
    rows = "".join(f"row {i}\n" for i in range(1, 201))
    base, new, replacements = apply_edits_to_normalized_content(
        rows, [{"oldText": "row 20\n", "newText": ""}, {"oldText": "row 150\n", "newText": "x\n"}], "m"
    )
    details = generate_edit_diff("m", base, new, replacements)
    assert details["firstChangedLine"] == 20
    assert details["patch"].count("@@ -") == 2
    assert details["diff"].count("...") == 3  # before, between (one marker for both windows), after


# ================================================================ jsdiff 8.0.4
def test_jsdiff_reports_a_changed_line_as_removed_then_added() -> None:
    parts = [(p.value, p.added, p.removed) for p in diff_lines("a\nb\nc\n", "a\nB\nc\n")]
    assert parts == [("a\n", False, False), ("b\n", False, True), ("B\n", True, False), ("c\n", False, False)]


def test_jsdiffs_patch_marks_a_missing_newline_at_the_end() -> None:
    assert format_patch("f", "f", structured_patch("a\nb", "a\nc")) == (
        "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    )


# ================================================================ read of an image (read.js:210-229, mime.js)
_PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def test_an_image_is_known_by_its_first_bytes() -> None:
    assert detect_image_mime(_PNG_1X1) == "image/png"
    assert detect_image_mime(b"GIF89a\x01\x00\x01\x00") == "image/gif"
    assert detect_image_mime(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert detect_image_mime(b"\xff\xd8\xff\xf7") is None  # JPEG-LS: not an image to Pi
    assert detect_image_mime(b"RIFF\0\0\0\0WEBPVP8L") == "image/webp"
    apng = _PNG_1X1[:33] + b"\0\0\0\x08acTL" + b"\0" * 12
    assert detect_image_mime(apng) is None  # animated PNG: read as text
    assert detect_image_mime(b"plain text") is None


def test_a_small_picture_is_passed_through_with_pis_note(tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(_PNG_1X1)
    result = _run(tmp_path, "read", {"path": "p.png"})
    data = base64.b64encode(_PNG_1X1).decode("ascii")
    assert result["content"] == [
        {"type": "text", "text": "Read image file [image/png]"},
        {"type": "image", "data": data, "mimeType": "image/png"},
    ]
    assert "details" not in result  # no model known: nothing to name


def test_a_model_without_image_input_is_named_in_the_details() -> None:
    result = read_image(_PNG_1X1, "image/png", "fake-model", False)
    assert result["details"] == {"imageUnsupportedByModel": "fake-model"}


@pytest.mark.parametrize(
    ("data", "mime", "why"),
    [
        (b"BM" + b"\0" * 40, "image/bmp", "Pi converts a BMP to PNG"),
        (
            _PNG_1X1[:16] + (3000).to_bytes(4, "big") + _PNG_1X1[20:],
            "image/png",
            "Pi resizes a 3000x1 picture",
        ),
        (b"\xff\xd8\xff\xe0\0\x10", "image/jpeg", "could not be read from its header"),
    ],
)
def test_what_photon_would_change_is_refused_as_not_modelled(data: bytes, mime: str, why: str) -> None:
    with pytest.raises(ImageNotModelledError, match=why):
        read_image(data, mime, None, True)
