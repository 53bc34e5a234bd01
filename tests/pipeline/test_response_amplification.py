"""Response schemas that amplify (issue 31.5): a 50 MB `minLength`, 5 million items, products of both.

At load, minimums over `RESPONSE_MINIMUMS` are lowered with a warning; while generating, an instance past
`MAX_GENERATED_SIZE` is refused before it is built. Each call is answered in well under a second (it took 1.2 s for
50 MB and 58 s for 5 million items, blocking `/health`), and the toolkit's other tools work.
"""

from __future__ import annotations

import logging
import time

import pytest

from gecko.toolkits.guards import RESPONSE_MINIMUMS
from utils.paths import REPO_ROOT
from utils.schema.instance import MAX_GENERATED_SIZE, ResponseTooLarge, generate_instance

HOSTILE = REPO_ROOT / "tests" / "data" / "hostile" / "amplify"


@pytest.fixture
def amplify(make_client, caplog):
    with caplog.at_level(logging.WARNING, logger="gecko.toolkits.guards"):
        client = make_client(schemas_dirs=[HOSTILE])
    return client, caplog.text


def test_amplifying_minimums_are_lowered_at_load_with_a_warning(amplify):
    client, log = amplify
    assert "big_string response: minLength 50,000,000 at /properties/blob lowered to 100,000" in log
    assert "many_items response: minItems 5,000,000 at / lowered to 10,000" in log


@pytest.mark.parametrize(("tool", "status"), [("big_string", 200), ("many_items", 200), ("nested_items", 500),
                                              ("long_pattern", 500), ("fine", 200)])
def test_every_call_is_answered_at_once_and_bounded(amplify, tool, status):
    client, _ = amplify
    headers = {"X-Session-ID": client.get("/session-id").json()["session_id"]}
    start = time.perf_counter()
    reply = client.post(f"/amplify/{tool}", json={}, headers=headers)
    took = time.perf_counter() - start
    assert reply.status_code == status, reply.text[:300]
    assert took < 2.0 and len(reply.content) < 2 * MAX_GENERATED_SIZE
    if status == 500:
        assert "Gecko simulates no larger response" in reply.json()["detail"]
    assert client.get("/health").status_code == 200


def test_the_generator_refuses_before_building():
    start = time.perf_counter()
    with pytest.raises(ResponseTooLarge):
        generate_instance({"type": "array", "minItems": 50_000_000}, "s")
    with pytest.raises(ResponseTooLarge):
        generate_instance({"type": "string", "minLength": MAX_GENERATED_SIZE + 1}, "s")
    assert time.perf_counter() - start < 0.5
    assert len(generate_instance({"type": "string", "minLength": RESPONSE_MINIMUMS["minLength"]}, "s")) == 100_000
