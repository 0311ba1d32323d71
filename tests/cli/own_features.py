"""The worked example of docs/running-the-suite.md ("Writing a scenario of your own"), read
from the document itself, so the tests that follow it test what the document says."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "running-the-suite.md"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Writing a scenario of your own")
    return text[start : text.index("\n## ", start + 1)]


def files() -> dict[str, str]:
    """``path -> text`` of every file the section shows (a backquoted path, a colon, a block)."""
    found = re.findall(
        r"^`(my_features/[^`]+)`[^\n]*\n(?:[^\n]+\n)*?\n```\w+\n(.*?)```", section(), re.M | re.S
    )
    return dict(found)


def commands() -> list[list[str]]:
    """Every command of the section's ``bash`` blocks, as argument lists."""
    blocks = re.findall(r"```bash\n(.*?)```", section(), re.S)
    return [shlex.split(line) for block in blocks for line in block.splitlines() if line.strip()]


def write(project: Path) -> None:
    for name, text in files().items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
