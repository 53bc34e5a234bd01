"""Fixtures of the converter tests: example inputs, a helper that loads documents in the server's loader,
and one build of the BFCL toolkits (into a temporary data dir) shared by the whole session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gecko.convert import write_document
from gecko.toolkits import ToolkitRegistry, load_toolkits
from tests.convert.convert_support import run_build


@pytest.fixture(scope="session")
def bfcl_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding freshly built BFCL toolkits (validation is left to the tests)."""
    data_dir = tmp_path_factory.mktemp("bfcl-build")
    run_build(data_dir, "--no-validate")
    return data_dir


@pytest.fixture
def load_docs(tmp_path: Path) -> Callable[..., ToolkitRegistry]:
    """Write documents (name → dict) into a temporary dir and load them like the server does."""

    def _load(**docs: dict[str, Any]) -> ToolkitRegistry:
        directory = tmp_path / "toolkits"
        for name, doc in docs.items():
            write_document(doc, directory / f"{name}.json")
        return load_toolkits([directory])

    return _load
