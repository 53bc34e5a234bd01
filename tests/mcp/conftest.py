"""The suite's real 2-worker Gecko (SQLite store, known state dir) for the MCP clients, and helpers to drive it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

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
def mcp_gecko(live_gecko: str, live_gecko_state: Path) -> LiveGecko:
    """The suite's 2-worker Gecko on the test toolkits, with its state dir (shared with stdio servers in tests)."""
    return LiveGecko(live_gecko, live_gecko_state)
