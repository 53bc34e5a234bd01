"""The shell and Python code blocks of the user docs (README.md and docs/), with how each is tested.

A block is tested unless the line right before its fence says why not: `<!-- no-test: REASON -->`. Other markers
on that line, `<!-- test: OPTION, … -->`:

- `serves`: the block ends by starting a server that runs until stopped; it passes once that server answers
  `GET /health` (it binds a free port: `GECKO_PORT=0`), and is then stopped.
- `http-errors`: the block shows error answers on purpose; `curl` does not fail on a 4xx.
- `slow`: the block takes more than a minute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from utils.paths import REPO_ROOT

DOC_FILES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]
LANGUAGES = {"bash": "bash", "sh": "bash", "shell": "bash", "python": "python", "py": "python"}
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
_NO_TEST = re.compile(r"<!--\s*no-test:\s*(.*?)\s*-->")
_TEST = re.compile(r"<!--\s*test:\s*(.*?)\s*-->")
TEST_OPTIONS = {"serves", "http-errors", "slow"}


@dataclass(frozen=True)
class DocBlock:
    """One fenced code block of a doc page."""

    path: Path
    line: int
    """Line of the opening fence (1-based)."""
    language: str
    """`bash` or `python`."""
    code: str
    no_test: str | None
    """Why the block is not executed (None: it is)."""
    options: frozenset[str]

    @property
    def id(self) -> str:
        """`page:line`, the test id."""
        return f"{self.path.relative_to(REPO_ROOT)}:{self.line}"


def doc_blocks(files: list[Path] | None = None) -> list[DocBlock]:
    """Every shell and Python block of `files` (default: README.md and every page under docs/)."""
    blocks = []
    for path in files or DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            language = LANGUAGES.get(match.group(1))
            if language is None:
                continue
            before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            no_test = _NO_TEST.search(before)
            test = _TEST.search(before)
            options = frozenset(o.strip() for o in test.group(1).split(",")) if test else frozenset()
            blocks.append(DocBlock(path, text.count("\n", 0, match.start()) + 1, language, match.group(2),
                                   no_test.group(1) if no_test else None, options))
    return blocks
