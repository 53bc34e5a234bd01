from __future__ import annotations

from collections.abc import Iterator

import pytest

from utils.llm_stub import StubConfig
from utils.llm_stub.testing import StubHandle, run_stub


@pytest.fixture(scope="module")
def stub() -> Iterator[StubHandle]:
    with run_stub(StubConfig()) as handle:
        yield handle
