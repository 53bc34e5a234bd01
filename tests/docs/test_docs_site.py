"""The docs site builds with `mkdocs build --strict` (what `make docs` and CI run), and strictness bites."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.infra import require_module
from utils.paths import REPO_ROOT

pytestmark = pytest.mark.timeout(300)


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    require_module("mkdocs", "the docs extra is not installed: make setup (pip install -e '.[docs]')")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=240, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_the_docs_build_strictly_with_the_generated_references(tmp_path: Path) -> None:
    done = build(REPO_ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "gecko serve" in cli and "--schemas-dir" in cli and "gecko data export" in cli  # from the parsers
    assert "GECKO_VALIDATION_MODEL" in (tmp_path / "site" / "reference" / "configuration" / "index.html").read_text()
    api = (tmp_path / "site" / "reference" / "python-api" / "index.html").read_text()
    assert "Simulator" in api and "SyncGeckoClient" in api  # mkdocstrings rendered the public API


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """A copy of the site with one link to a page that does not exist: the strict build refuses it."""
    root = tmp_path / "copy"
    root.mkdir()
    for entry in REPO_ROOT.iterdir():
        if entry.name not in ("docs", "mkdocs.yml", "site", ".git"):
            (root / entry.name).symlink_to(entry)
    shutil.copytree(REPO_ROOT / "docs", root / "docs", ignore=shutil.ignore_patterns("cli.md"))
    shutil.copy(REPO_ROOT / "mkdocs.yml", root / "mkdocs.yml")
    page = root / "docs" / "guides" / "verify.md"
    page.write_text(page.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    done = build(root / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 1
    assert "'guides/no-such-page.md' is not found" in done.stderr + done.stdout


def test_the_readme_links_to_files_that_exist() -> None:
    """README.md is not part of the site, so its links are checked here: each relative one names a file."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", readme) if not t.startswith(("http", "#"))]
    assert targets
    assert [t for t in targets if not (REPO_ROOT / t).exists()] == []
