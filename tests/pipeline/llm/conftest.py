"""Fixtures for the LLM stages: a three-operation toolkit, the stub over HTTP, a client with zero waits."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from gecko.toolkits.loader import build_toolkit
from gecko.toolkits.model import Toolkit
from tests.pipeline.llm.llm_stage_helpers import NOTES_DOC
from utils.llm import LLMClient
from utils.llm_stub import StubConfig
from utils.llm_stub.testing import StubHandle, run_stub, stub_client


@pytest.fixture(scope="session")
def notes() -> Toolkit:
    return build_toolkit(Path("notes.json"), NOTES_DOC)


@pytest.fixture(scope="module")
def stub() -> Iterator[StubHandle]:
    with run_stub(StubConfig()) as handle:
        yield handle


@pytest.fixture
async def client(stub: StubHandle) -> AsyncIterator[LLMClient]:
    llm = stub_client(stub, timeout_s=5, max_attempts=3)
    yield llm
    await llm.aclose()
