"""`GET /tools/search` with `mode=`: the default (BM25; the setting `search_mode`), each ranking, and a server that cannot rank densely."""

from __future__ import annotations

from gecko.toolkits.search_encoder import EncoderUnavailable, model_dir
from tests.infra import require, require_module

require_module("bm25s", "tool search needs the [search] extra (make setup installs it)")
PROBLEM = "application/problem+json"


def _dense_here() -> bool:
    try:
        model_dir()
        import tokenizers  # noqa: F401
    except (EncoderUnavailable, ImportError):
        return False
    return True


def test_every_mode_and_the_default(client):
    require(_dense_here(), "no embedding model here; `make setup` installs it")
    default = client.get("/tools/search", params={"q": "create a new note", "k": 3})
    assert default.status_code == 200
    body = default.json()
    assert body["engine"] == "bm25" and body["dense_unavailable"] is None and len(body["hits"]) == 3
    assert body["hits"][0]["name"] == "create_note"
    for mode in ("bm25", "dense", "hybrid"):
        reply = client.get("/tools/search", params={"q": "create a new note", "k": 3, "mode": mode}).json()
        assert reply["engine"] == mode and reply["hits"][0]["name"] == "create_note", mode
    dense = client.get("/tools/search", params={"q": "change my profile", "k": 5, "mode": "dense"}).json()
    assert len(dense["hits"]) == 5  # dense ranks every tool
    assert client.get("/tools/search", params={"q": "zzzz qqqq", "mode": "bm25"}).json()["hits"] == []


def test_the_setting_search_mode_makes_hybrid_the_default(make_client):
    require(_dense_here(), "no embedding model here; `make setup` installs it")
    client = make_client(search_mode="hybrid")
    query = {"q": "will it rain tomorrow", "k": 3}  # no word in common with any tool
    assert client.get("/tools/search", params={**query, "mode": "bm25"}).json()["hits"] == []
    body = client.get("/tools/search", params=query).json()
    assert body["engine"] == "hybrid" and len(body["hits"]) == 3


def test_an_unknown_mode_is_a_422(client):
    reply = client.get("/tools/search", params={"q": "note", "mode": "semantic"})
    assert reply.status_code == 422 and reply.headers["content-type"].startswith(PROBLEM)


def test_without_dense_search_bm25_answers_and_dense_is_a_501(make_client):
    client = make_client(dense_search=False)
    body = client.get("/tools/search", params={"q": "create a note", "k": 2}).json()
    assert body["engine"] == "bm25" and "turned off" in body["dense_unavailable"]
    assert body["hits"][0]["name"] == "create_note"
    for mode in ("dense", "hybrid"):
        reply = client.get("/tools/search", params={"q": "create a note", "mode": mode})
        assert reply.status_code == 501 and reply.headers["content-type"].startswith(PROBLEM)
        assert "dense ranking is unavailable" in reply.json()["detail"]


def test_the_openapi_document_lists_the_modes_and_the_501(client):
    op = client.get("/openapi.json").json()["paths"]["/tools/search"]["get"]
    mode = next(p for p in op["parameters"] if p["name"] == "mode")
    assert mode["required"] is False
    assert {"bm25", "dense", "hybrid"} <= {v for s in mode["schema"].get("anyOf", [mode["schema"]])
                                           for v in s.get("enum", [])}
    assert {"404", "422", "501"} <= set(op["responses"])
