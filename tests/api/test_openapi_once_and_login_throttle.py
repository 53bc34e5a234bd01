"""`/openapi.json` is built once (issue 31.9: 10,000 operations cost 6 s and 35 MB per request), and `/ui/login`
refuses a guesser after a few wrong keys (it took 513 guesses a second)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from gecko.api import docs_pages
from gecko.api.routes.ui import LOGIN_FAILURES


def test_the_document_is_serialized_once(make_client, monkeypatch):
    calls: list[int] = []
    real = docs_pages.dumps_compact

    def counting(value):
        calls.append(1)
        return real(value)

    monkeypatch.setattr(docs_pages, "dumps_compact", counting)
    client = make_client()
    first, second = client.get("/openapi.json"), client.get("/openapi.json")
    assert first.status_code == second.status_code == 200 and first.content == second.content
    assert first.headers["content-type"] == "application/json" and "/notes/create_note" in first.json()["paths"]
    assert len(calls) == 1


def test_the_router_builds_once_for_concurrent_first_requests():
    builds: list[int] = []
    app = FastAPI(openapi_url=None)
    app.include_router(docs_pages.openapi_router(lambda: builds.append(1) or {"openapi": "3.1.0"}))
    with TestClient(app) as client:
        assert [client.get("/openapi.json").json() for _ in range(3)] == [{"openapi": "3.1.0"}] * 3
    assert builds == [1]


def test_login_is_throttled_after_wrong_keys(make_client):
    client = make_client(api_key="the-right-key")
    for _ in range(LOGIN_FAILURES):
        assert client.post("/ui/login", data={"key": "guess"}, follow_redirects=False).status_code == 401
    refused = client.post("/ui/login", data={"key": "the-right-key"}, follow_redirects=False)
    assert refused.status_code == 429 and 0 < int(refused.headers["retry-after"]) <= 61
    assert "Too many wrong keys" in refused.text and "frame-ancestors" in refused.headers["content-security-policy"]


def test_a_right_key_signs_in_without_counting(make_client):
    client = make_client(api_key="the-right-key")
    for _ in range(LOGIN_FAILURES + 2):
        assert client.post("/ui/login", data={"key": "the-right-key"}, follow_redirects=False).status_code == 303
