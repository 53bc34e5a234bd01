"""All LLM stages over HTTP: 2 Gecko workers (SQLite) against the OpenAI-compatible stub server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from tests.conftest import TOOLKITS_DIR
from utils.llm_stub.testing import run_stub_process
from utils.procs import gecko_server

pytestmark = pytest.mark.integration
NOTE = {"title": "Groceries", "body": "milk and eggs", "priority": 2}


def _gecko_args(model: str) -> list[str]:
    return ["--response-model", model, "--state-model", model, "--validation-model", model, "--judge-model", model,
            "--llm-timeout", "2", "--llm-max-attempts", "2", "--no-cache"]


async def _calls(url: str, session: str, n: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        out = []
        for i in range(n):  # sequential within the session, like an agent
            out.append(await client.post("/notes/create_note", json={**NOTE, "title": f"note {i}"},
                                         headers={"X-Session-ID": session}))
            out.append(await client.post("/notes/get_note", json={"note_id": f"N-{i}"},
                                         headers={"X-Session-ID": session}))
        return out


def test_all_stages_against_the_stub(tmp_path: Path):
    with run_stub_process(["--latency-ms", "5"]) as stub:
        model = stub.model()
        with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path, extra=_gecko_args(model)) as url:
            health = httpx.get(f"{url}/health").json()
            assert {r["model"] for r in health["roles"].values()} == {model}
            assert health["offline"] is False and health["state_model_enabled"] is True
            sid = httpx.get(f"{url}/session-id").json()["session_id"]
            responses = asyncio.run(_calls(url, sid, 3))
            assert [r.status_code for r in responses] == [200] * 6
            assert all(r.headers["X-Gecko-Semantic"] == "valid" for r in responses)
            history = httpx.get(f"{url}/sessions/{sid}/history").json()["calls"]
            writes = [h for h in history if h["tool"] == "notes/create_note"]
            assert all(h["engines"]["responder"] == model for h in writes)
            assert all(h["engines"]["state"]["engine"] == model and h["engines"]["state"].get("deferred") for h in writes)
            state = httpx.get(f"{url}/get-session-state", headers={"X-Session-ID": sid}).json()
            assert state["version"] == 3
            usage = httpx.get(f"{url}/sessions/{sid}/usage").json()
            assert usage and json.dumps(usage).count("responder") >= 1
            checklist = httpx.post(f"{url}/sessions/{sid}/checklist", json={"task": "Save three notes"}).json()
            assert checklist["engine"] == model and checklist["items"]
            verdict = httpx.post(f"{url}/sessions/{sid}/judge", json={"agent_response": "Saved."})
            assert verdict.status_code == 200 and verdict.json()["engine"] == model
            assert set(i["status"] for i in verdict.json()["items"]) <= {"success", "failed", "unknown"}
            metrics = httpx.get(f"{url}/metrics").text
            assert "gecko_llm" in metrics


def test_thirty_percent_faults_never_500_and_fallbacks_are_recorded(tmp_path: Path):
    with run_stub_process(["--fault-rate", "0.3", "--seed", "7", "--hang-s", "3", "--retry-after", "0"]) as stub:
        model = stub.model()
        with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path, extra=_gecko_args(model)) as url:
            sid = httpx.get(f"{url}/session-id").json()["session_id"]
            responses = asyncio.run(_calls(url, sid, 6))
            assert all(r.status_code in (200, 422) for r in responses), [r.status_code for r in responses]
            history = httpx.get(f"{url}/sessions/{sid}/history").json()["calls"]
            outcomes = {h["validation"]["semantic"] for h in history}
            assert outcomes <= {"valid", "invalid", "unchecked"}
            for h in history:
                if h["status"] == 200:
                    assert h["engines"]["fallback"] in (None, "rules")
            judged = [httpx.post(f"{url}/sessions/{sid}/judge", json={"task": "Save notes"}) for _ in range(5)]
            assert all(r.status_code in (200, 502) for r in judged)
            assert all(r.json().get("success") is not True or r.status_code == 200 for r in judged)
