"""A real 2-worker Gecko (SQLite store, known state dir) for the MCP clients, and helpers to drive it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import TOOLKITS_DIR
from utils.procs import gecko_server

NOTE = {"title": "groceries", "body": "eggs, milk"}
BAD_NOTE = {"title": "", "bogus": 1}
BAD_NOTE_DETAIL = "Unknown argument 'bogus' is not accepted by tool create_note."


@dataclass(frozen=True)
class LiveGecko:
    url: str
    state_dir: Path

    def state(self, session_id: str) -> dict:
        """The session's state over Gecko's HTTP API."""
        reply = httpx.get(f"{self.url}/get-session-state", headers={"X-Session-ID": session_id}, timeout=10)
        reply.raise_for_status()
        return reply.json()["state"]

    def history(self, session_id: str) -> list[dict]:
        reply = httpx.get(f"{self.url}/sessions/{session_id}/history", timeout=10)
        reply.raise_for_status()
        return reply.json()["calls"]

    def new_session(self, state: dict | None = None) -> str:
        reply = httpx.post(f"{self.url}/sessions", json={"state": state or {}}, timeout=10)
        reply.raise_for_status()
        return reply.json()["session_id"]


@pytest.fixture(scope="session")
def mcp_gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveGecko]:
    """Gecko with 2 workers on the test toolkits; its state dir is shared with stdio servers in tests."""
    state = tmp_path_factory.mktemp("gecko-mcp-state")
    with gecko_server([TOOLKITS_DIR], workers=2, state_dir=state, log_path=state / "server.log") as url:
        yield LiveGecko(url, state)
