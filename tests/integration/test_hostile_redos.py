"""ReDoS (issue 31): a toolkit regex with nested quantifiers and a 31-character argument must not hold a worker.

jsonschema-rs refuses the call in microseconds; the explanation of the refusal used to run Python's backtracking
`re` on the event loop (a minute per call, the worker killed by uvicorn). Now every regex runs on jsonschema-rs's
engine, so the call is a 422 at once and `/health` of the same (single) worker keeps answering.
"""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path

import httpx
import pytest

from utils.paths import REPO_ROOT
from utils.procs import gecko_server

HOSTILE = REPO_ROOT / "tests" / "data" / "hostile" / "redos"
ATTACK = "a" * 30 + "!"

pytestmark = pytest.mark.integration


def _health_latencies(url: str, stop: threading.Event, seen: list[float]) -> None:
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            start = time.perf_counter()
            client.get(f"{url}/health")
            seen.append(time.perf_counter() - start)
            time.sleep(0.01)


def test_nested_quantifier_is_refused_at_once_and_health_keeps_answering(tmp_path: Path) -> None:
    with gecko_server([HOSTILE], workers=1, state_dir=tmp_path, log_path=tmp_path / "server.log") as url, \
            httpx.Client(timeout=30) as client:
        session = {"X-Session-ID": client.get(f"{url}/session-id").json()["session_id"]}
        client.post(f"{url}/redos/check", json={"word": "aaa"}, headers=session)  # compiles the validators
        stop, health = threading.Event(), list[float]()
        prober = threading.Thread(target=_health_latencies, args=(url, stop, health))
        prober.start()
        answers: list[float] = []
        try:
            for body in ({"word": ATTACK}, {"word": "a", "email": ATTACK}, {"word": "a", "tags": {ATTACK: 1}}):
                start = time.perf_counter()
                reply = client.post(f"{url}/redos/check", json=body, headers=session)
                answers.append(time.perf_counter() - start)
                assert reply.status_code == 422, reply.text
            time.sleep(0.2)
        finally:
            stop.set()
            prober.join(timeout=30)
        assert min(answers) < 0.1 and max(answers) < 2.0, answers
        assert health and statistics.median(health) < 0.1 and max(health) < 2.0, health  # was: no answer for 60 s
