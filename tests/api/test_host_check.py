"""DNS rebinding (issue 31.3): only configured host names are answered; the viewer and the docs pages are locked down."""

from __future__ import annotations

import re

import pytest

from gecko.api.hosts import accepted_hosts, host_name

EVIL = {"Host": "rebind.evil.example:8000"}


@pytest.mark.parametrize("path", ["/sessions", "/ui", "/health", "/toolkits", "/openapi.json"])
def test_another_host_name_reaches_nothing(client, path):
    reply = client.get(path, headers=EVIL)
    assert reply.status_code == 421 and "--allowed-hosts" in reply.json()["detail"]
    assert client.get(path, headers={"Host": "localhost:8000"}).status_code == 200
    assert client.get(path, headers={"Host": "[::1]:8000"}).status_code == 200


def test_tool_calls_and_mcp_are_refused_for_another_host(client, session):
    assert client.post("/notes/list_notes", json={}, headers={**session, **EVIL}).status_code == 421
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    mcp = {"Accept": "application/json, text/event-stream"}
    assert client.post("/mcp", json=init, headers={**mcp, **EVIL}).status_code == 421
    assert client.post("/mcp", json=init, headers={**mcp, "Origin": "http://rebind.evil.example"}).status_code == 403
    assert client.post("/mcp", json=init, headers={**mcp, "Origin": "http://localhost:3000"}).status_code == 200


def test_a_page_of_another_origin_cannot_change_a_session(client, session):
    reply = client.put(f"/sessions/{session['X-Session-ID']}/faults", json={"rules": []},
                       headers={"Origin": "https://attacker.example"})
    assert reply.status_code == 403


def test_allowed_hosts_widen_and_star_accepts_any(make_client):
    widened = make_client(allowed_hosts=["gecko.internal"])
    assert widened.get("/sessions", headers={"Host": "Gecko.Internal:80"}).status_code == 200
    assert widened.get("/sessions", headers=EVIL).status_code == 421
    assert make_client(allowed_hosts=["*"]).get("/sessions", headers=EVIL).status_code == 200


def test_the_bound_address_is_accepted_and_names_are_parsed_without_ports():
    assert "10.1.2.3" in accepted_hosts("10.1.2.3", []) and "[fd00::1]" in accepted_hosts("fd00::1", [])
    assert "0.0.0.0" not in accepted_hosts("0.0.0.0", [])
    assert host_name("[::1]:8000") == "[::1]" and host_name("Example.COM:80") == "example.com"


def test_viewer_answers_carry_security_headers(client):
    for path in ("/ui", "/ui/login", "/ui/static/app.js"):
        headers = client.get(path).headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"], path
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "same-origin"


def test_docs_pages_load_pinned_scripts_with_integrity_hashes(client):
    for path in ("/docs", "/redoc"):
        page = client.get(path).text
        scripts = re.findall(r"<(?:script|link)[^>]*(?:src|href)=\"(https://[^\"]+)\"[^>]*>", page)
        assert scripts, page
        for tag in re.findall(r"<(?:script|link)[^>]*https://[^>]*>", page):
            assert re.search(r"@\d+\.\d+\.\d+/", tag) and 'integrity="sha384-' in tag, tag
