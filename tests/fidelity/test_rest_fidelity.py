"""Gecko against real REST servers nobody here wrote (`perf/rest_fidelity.py`, small): json-server 0.17.4, which
stores whatever it is sent, and temba 0.51.1, which validates bodies, each beside a 2-worker Gecko on the rules
engines, the same seeded sequences on both.

The instrument is checked on the real servers (every check passes on their answers); then what Gecko did before
issue 32 (outcomes, validation) and issue 32's targets, each of which failed before its world model change:
creates store only what was sent, PUT replaces, declared statuses, headers and empty 204s, no invented field,
lists agree with the state, the declared page size, final states agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.fidelity.rest_replay import ReplayConfig, run
from benchmarks.fidelity.rest_replay.calls import SequenceMaker
from benchmarks.fidelity.rest_replay.contract import param_role, resources
from tests.mcp.npm_tools import npm_tool
from utils.paths import REPO_ROOT

pytestmark = pytest.mark.integration

DOCUMENTS = REPO_ROOT / "perf" / "data" / "rest_fidelity"
NPM_DIR = REPO_ROOT / ".npm-tools"


def _run(backend: str, sequences: int) -> dict[str, Any]:
    npm_tool("node")
    document = DOCUMENTS / backend.replace("-", "_") / "blog.json"
    return run(ReplayConfig(backend, document, NPM_DIR, sequences=sequences, calls=20, seed=7))


@pytest.fixture(scope="module")
def json_server() -> dict[str, Any]:
    return _run("json-server", 10)


@pytest.fixture(scope="module")
def temba() -> dict[str, Any]:
    return _run("temba", 6)


def _rate(figures: dict[str, Any], *path: str) -> float:
    value: Any = figures
    for key in path:
        value = value[key]
    assert value["n"] > 0, (path, value)
    return float(value["rate"])


@pytest.mark.parametrize("backend", ["json_server", "temba"])
def test_the_checks_pass_on_the_real_servers(backend: str, request: pytest.FixtureRequest) -> None:
    figures = request.getfixturevalue(backend)
    assert figures["calls"] == figures["sequences"] * 20
    real = figures["real_server_checks"]
    assert _rate(real, "creates_only_sent") == 1.0
    assert _rate(real, "put_replaces") == 1.0
    for kind in ("create", "delete", "other"):
        assert _rate(real, "status_exact", kind) == 1.0, kind
    if backend == "temba":  # declares Location on creates and 204 without content on deletes
        assert _rate(real, "declared_headers_present") == 1.0
        assert _rate(real, "no_body_when_declared_without_content") == 1.0
    assert figures["server_errors"] == {"gecko": 0, "real": 0}


def test_what_gecko_already_does(json_server: dict[str, Any], temba: dict[str, Any]) -> None:
    # json-server: missing ids agree, and Gecko refuses every body the document forbids (json-server stores it).
    assert _rate(json_server, "outcome_agreement", "missing") == 1.0
    assert _rate(json_server, "outcome_agreement", "valid") == 1.0
    assert _rate(json_server, "gecko_rejects_invalid_only_gecko_saw") == 1.0
    # temba validates: both refuse the same invalid bodies.
    assert _rate(temba, "outcome_agreement", "invalid") == 1.0
    assert _rate(temba, "outcome_agreement", "valid") == 1.0
    for figures in (json_server, temba):
        assert _rate(figures, "status_exact", "other") == 1.0
        assert figures["invented_fields"]["answered_but_not_held"] == 0


@pytest.mark.parametrize("backend", ["json_server", "temba"])
def test_creates_store_only_what_was_sent(backend: str, request: pytest.FixtureRequest) -> None:
    assert _rate(request.getfixturevalue(backend), "creates_only_sent") >= 0.99


@pytest.mark.parametrize("backend", ["json_server", "temba"])
def test_put_replaces(backend: str, request: pytest.FixtureRequest) -> None:
    assert _rate(request.getfixturevalue(backend), "put_replaces") >= 0.99


@pytest.mark.parametrize("backend", ["json_server", "temba"])
def test_creates_answer_the_declared_status(backend: str, request: pytest.FixtureRequest) -> None:
    assert _rate(request.getfixturevalue(backend), "status_exact", "create") >= 0.99


def test_deletes_answer_the_declared_status(temba: dict[str, Any]) -> None:
    assert _rate(temba, "status_exact", "delete") >= 0.99  # 204 declared (json-server declares 200)
    assert _rate(temba, "no_body_when_declared_without_content") >= 0.99


def test_declared_response_headers_are_sent(temba: dict[str, Any]) -> None:
    assert _rate(temba, "declared_headers_present") >= 0.99  # Location on creates


@pytest.mark.parametrize("backend", ["json_server", "temba"])
def test_reads_invent_no_field(backend: str, request: pytest.FixtureRequest) -> None:
    invented = request.getfixturevalue(backend)["invented_fields"]
    assert invented["records_checked"] > 0
    assert invented["fields_vs_state"] == 0 and invented["fields_vs_real"] == 0


@pytest.mark.parametrize("backend", ["json_server", "temba"])
def test_lists_agree_with_own_state(backend: str, request: pytest.FixtureRequest) -> None:
    assert _rate(request.getfixturevalue(backend), "own_list_disagrees_with_state") == 0.0


def test_declared_page_size_is_honoured(json_server: dict[str, Any]) -> None:
    assert _rate(json_server, "page_size_honoured") >= 0.95


@pytest.mark.parametrize("backend", ["json_server", "temba"])
def test_final_states_agree(backend: str, request: pytest.FixtureRequest) -> None:
    assert _rate(request.getfixturevalue(backend), "final_state_exact") >= 0.95


def test_document_roles_are_read_from_the_document() -> None:
    """The harness reads list parameters' roles from name, schema and description, not from json-server's names."""
    found = {r.name: r for r in resources(json.loads((DOCUMENTS / "json_server" / "blog.json").read_text()))}
    assert set(found) == {"posts", "comments", "notes"}
    posts = found["posts"]
    assert posts.create.success == 201 and posts.read.success == 200 and posts.delete.success == 200
    assert {p.name: p.role for p in posts.listing.params} == {
        "_limit": "page_size", "_page": "page", "_sort": "sort", "_order": "order", "q": "search",
        "published": "filter", "title": "filter"}
    assert found["comments"].links == {"post_id": "posts"}
    assert "id" in posts.owned
    described = {"type": "integer"}
    assert param_role("top", described, "", set()) == "page_size"
    assert param_role("n", described, "Maximum number of results to return.", set()) == "page_size"
    assert param_role("n", described, "", set()) == "other"


def test_sequences_are_seeded() -> None:
    found = resources(json.loads((DOCUMENTS / "temba" / "blog.json").read_text()))
    one, two = SequenceMaker(found, 3, 20), SequenceMaker(found, 3, 20)
    assert one.make(5) == two.make(5) and one.make(5) != one.make(6)
    calls = [c for n in range(30) for c in one.make(n).calls]
    assert {c.kind for c in calls} == {"create", "read", "list", "replace", "update", "delete"}
    assert {c.intent for c in calls} == {"valid", "missing", "invalid"}
