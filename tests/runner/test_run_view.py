"""`gecko view`'s data and app: the tasks table and one task's page from a run directory's files (re-read while
the run goes on), the changes between attempts, the read-only app behind the same API key rules as the server."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from benchmarks.runner.run_view import RunView, call_changes
from gecko.api.security import UI_COOKIE, ui_token
from gecko_cli.view import create_view_app, view_command


def _call(name: str, ok: bool = True, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "ok": ok, "errors": [] if ok else [{"message": "bad"}]}


def _attempt(index: int, status: str, calls: list[dict[str, Any]], feedback: str | None = None) -> dict[str, Any]:
    return {"index": index, "status": status, "calls": calls, "feedback": feedback, "latency_s": {"total": 0.5},
            "usage_by_role": {"planner": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.001}}}


def _write_run(path: Path, tasks: dict[str, tuple[str, float | None, dict[str, Any]]]) -> Path:
    path.mkdir(exist_ok=True)
    (path / "config.json").write_text(json.dumps({"benchmark": "bfcl", "started_utc": "2026-11-23T08:00:00Z",
                                                  "config": {"model": "m", "max_retries": 2}}))
    with (path / "tasks.jsonl").open("a") as ledger, (path / "traces_simple.jsonl").open("a") as traces:
        for key, (status, score, trace) in tasks.items():
            ledger.write(json.dumps({"key": key, "group": "simple", "status": status, "score": score, "seconds": 1.5,
                                     "usage": [{"role": "planner", "input_tokens": 10, "output_tokens": 2}],
                                     "record": {"result": f"[{key}()]"}}) + "\n")
            traces.write(json.dumps({"id": key, **trace}) + "\n")
    return path


RECOVERED = {"best": 1, "attempts": [
    _attempt(0, "failed", [_call("lookup", ok=False, city="Pari"), _call("book", day=1)]),
    _attempt(1, "success", [_call("lookup", city="Paris"), _call("book", day=1), _call("pay")], feedback="fix the city"),
]}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return _write_run(tmp_path / "run", {"a": ("done", 1.0, RECOVERED),
                                         "b": ("untested", None, {"attempts": [], "error": "LLM down"})})


def test_call_changes_name_each_difference() -> None:
    before = [_call("lookup", ok=False, city="Pari"), _call("book", day=1), _call("cancel")]
    after = [_call("lookup", city="Paris"), _call("book", day=1), _call("pay"), _call("notify")]
    kinds = [(c["kind"], c["name"]) for c in call_changes(before, after)]
    assert kinds == [("changed", "lookup"), ("same", "book"), ("replaced", ["cancel", "pay"]), ("added", "notify")]
    assert call_changes(before, after)[0]["arguments"] == {"city": ["Pari", "Paris"]}
    assert call_changes(before, after)[0]["ok"] == [False, True]
    assert call_changes(before[:1], [])[0]["kind"] == "removed"
    assert call_changes([_call("f", x=1)], [_call("f")])[0]["arguments"] == {"x": [1, None]}  # a dropped argument


def test_tasks_table_and_one_task_of_a_running_run(run_dir: Path) -> None:
    view = RunView(run_dir, lambda path, key, entry, trace: {"official": {"valid": True}, "ground_truth": [key]})
    overview = view.overview()
    assert overview["running"] is True  # no summary.json yet
    assert [(t["key"], t["status"], t["attempts"], t["tokens"]) for t in overview["tasks"]] == [
        ("a", "done", 2, 12), ("b", "untested", 0, 12)]
    page = view.task("a")
    assert page is not None and page["official"] == {"valid": True} and page["ground_truth"] == ["a"]
    (turn,) = page["turns"]
    assert [a["best"] for a in turn["attempts"]] == [False, True] and turn["attempts"][1]["feedback"] == "fix the city"
    assert [c["kind"] for c in turn["changes"][0]] == ["changed", "same", "added"]
    assert page["answer"] == "[a()]" and view.task("nope") is None
    _write_run(run_dir, {"c": ("done", 0.0, {"attempts": [_attempt(0, "failed", [])], "best": 0})})  # one more task
    assert [t["key"] for t in view.overview()["tasks"]] == ["a", "b", "c"]
    (run_dir / "summary.json").write_text("{}")
    os.utime(run_dir / "summary.json", ns=((run_dir / "tasks.jsonl").stat().st_mtime_ns + 10**9,) * 2)
    assert view.overview()["running"] is False


def test_a_broken_benchmark_hook_leaves_the_page(run_dir: Path) -> None:
    def broken(*_: Any) -> dict[str, Any]:
        raise KeyError("no such category")

    page = RunView(run_dir, broken).task("a")
    assert page is not None and page["turns"] and "KeyError" in page["details_error"]


def test_multi_turn_trace_turns_with_their_real_execution(tmp_path: Path) -> None:
    turn = {"index": 0, "status": "success", "simulated": {"best": 1, "checklist": ["do it"], "attempts": [
        _attempt(0, "failed", [_call("ls", ok=False)]), _attempt(1, "success", [_call("ls", a=True)], "retry")]},
        "real": {"agent": "plan-replay", "calls": [_call("ls", a=True)]}, "divergence": {"diverged": False}}
    run = _write_run(tmp_path / "multi", {"m": ("done", 1.0, {"turns": [turn, {**turn, "index": 1}]})})
    page = RunView(run).task("m")
    assert page is not None and len(page["turns"]) == 2
    assert page["turns"][1]["real"]["agent"] == "plan-replay" and page["turns"][0]["checklist"] == ["do it"]
    assert page["turns"][0]["changes"][0][0]["arguments"] == {"a": [None, True]}


def test_the_app_is_read_only_and_keyed(run_dir: Path) -> None:
    client = TestClient(create_view_app(RunView(run_dir), api_key="k"), follow_redirects=False,
                        base_url="http://127.0.0.1:8790")
    assert client.get("/run", headers={"Host": "rebind.evil.example", "Authorization": "Bearer k"}).status_code == 421
    assert client.get("/run").status_code == 401
    assert client.get("/ui").headers["location"] == "/ui/login"
    assert client.post("/ui/login", data={"key": "wrong"}).status_code == 401
    signed = client.post("/ui/login", data={"key": "k"})
    assert signed.status_code == 303 and signed.cookies.get(UI_COOKIE) == ui_token("k")
    client.cookies.set(UI_COOKIE, ui_token("k"))
    page = client.get("/ui").text
    assert 'data-mode="run"' in page and 'src="http' not in page and 'href="http' not in page  # nothing from outside
    assert client.get("/ui/static/run.js").status_code == 200 and client.get("/ui/static/x.js").status_code == 404
    assert [t["key"] for t in client.get("/run").json()["tasks"]] == ["a", "b"]
    assert client.get("/run/tasks/a").json()["turns"][0]["attempts"][1]["status"] == "success"
    missing = client.get("/run/tasks/zz")
    assert missing.status_code == 404 and "no task 'zz'" in missing.json()["detail"]
    assert client.post("/run", headers={"Authorization": "Bearer k"}).status_code == 405  # nothing writes
    client.cookies.clear()
    assert client.get("/run", headers={"Authorization": "Bearer k"}).status_code == 200


def test_view_command_refuses_what_is_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GECKO_API_KEY", raising=False)
    assert view_command([str(tmp_path), "--port", "0"]) == 1
    assert "not a run directory" in capsys.readouterr().err
    key = tmp_path / "key"
    key.write_text("secret\n")
    monkeypatch.setenv("GECKO_API_KEY", "other")
    assert view_command([str(tmp_path), "--api-key-file", str(key)]) == 1
    assert "not both" in capsys.readouterr().err
