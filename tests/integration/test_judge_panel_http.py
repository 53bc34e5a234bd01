"""A judge panel over HTTP: 2 Gecko workers with `--judge-model` naming two stub models and one unreachable
endpoint; the unreachable judge is excluded and reported, never counted as a success."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import TOOLKITS_DIR
from utils.llm_stub.testing import run_stub_process
from utils.procs import gecko_server

pytestmark = pytest.mark.integration
DEAD = "openai-compatible:dead@http://127.0.0.1:9/v1"  # the discard port: nothing answers


def test_panel_of_three_with_one_judge_down(tmp_path: Path) -> None:
    with run_stub_process(["--latency-ms", "1"]) as stub:
        panel = f"{stub.model('judge-a')},{stub.model('judge-b')},{DEAD}"
        extra = ["--judge-model", panel, "--judge-vote", "unanimous", "--llm-timeout", "2", "--llm-max-attempts", "1",
                 "--no-cache"]
        with gecko_server([TOOLKITS_DIR], workers=2, state_dir=tmp_path, extra=extra) as url:
            judge = httpx.get(f"{url}/health").json()["roles"]["judge"]
            assert judge["model"] == panel
            assert [e["name"] for e in judge["endpoint"]["panel"]] == panel.split(",")  # each judge probed
            assert "probe_error" in judge["endpoint"]["panel"][2] and "probe_error" not in judge["endpoint"]["panel"][0]
            sid = httpx.post(f"{url}/sessions", json={}).json()["session_id"]
            httpx.post(f"{url}/notes/create_note", json={"title": "a", "body": "b"}, headers={"X-Session-ID": sid})
            checklist = [{"id": "1", "description": "The note is saved"},
                         {"id": "2", "description": "stub-fail: the user was told"}]
            body = {"task": "Save a note and tell the user", "checklist": checklist, "agent_response": "Saved."}
            reply = httpx.post(f"{url}/sessions/{sid}/judge", json=body, timeout=60)
            assert reply.status_code == 200, reply.text
            verdict = reply.json()
            assert [i["status"] for i in verdict["items"]] == ["success", "failed"] and verdict["success"] is False
            assert verdict["engine"] == panel and verdict["panel"]["vote"] == "unanimous"
            assert [j["model"] for j in verdict["panel"]["judges"]] == [stub.model("judge-a"), stub.model("judge-b")]
            assert [e["model"] for e in verdict["panel"]["excluded"]] == [DEAD]
            assert verdict["panel"]["agreement"] == {"judges": 2, "pairwise": 1.0, "fleiss_kappa": 1.0}
            assert {u["model"] for u in verdict["usage"]} >= {stub.model("judge-a"), stub.model("judge-b")}
