"""mkdocs hooks (mkdocs.yml `hooks:`): generate the CLI reference from the parsers before the pages are read."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_GENERATOR = Path(__file__).resolve().parent / "gen_cli_docs.py"


def on_pre_build(config: Any) -> None:
    """Write docs/reference/cli.md (mkdocs reads the docs directory after this hook)."""
    spec = importlib.util.spec_from_file_location("gen_cli_docs", _GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(Path(config["docs_dir"]) / "reference" / "cli.md")
