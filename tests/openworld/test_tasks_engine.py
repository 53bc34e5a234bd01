"""The task creation engine on the small pool: deterministic drafts, well-formed constraints, validation in a real
Gecko (kept tasks ran green, drops counted by reason), and `gecko openworld tasks` end to end."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from benchmarks.openworld.tasks.catalog import PoolCatalog
from benchmarks.openworld.tasks.cli import main
from benchmarks.openworld.tasks.constraints import constraint_holds, well_formed
from benchmarks.openworld.tasks.generate import TaskSetResult, make_taskset
from benchmarks.openworld.tasks.model import (
    OpenWorldTask,
    ReferenceCall,
    TaskConstraint,
    TaskSetManifest,
    read_tasks,
)
from benchmarks.openworld.tasks.template import TemplateEngine
from inference.gecko.client import GeckoClient
from utils.procs import gecko_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def catalog(small_pool) -> PoolCatalog:
    return PoolCatalog.open(Path(small_pool[0]))


@pytest.fixture(scope="module")
def pool_gecko(small_pool, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with gecko_server([Path(small_pool[0]) / "toolkits"], workers=2, state_dir=tmp_path_factory.mktemp("state"),
                      timeout=180) as url:
        yield url


def _dump(tasks: list[OpenWorldTask | None]) -> list[str | None]:
    return [t.model_dump_json() if t else None for t in tasks]


def test_same_seed_same_tasks_other_seed_other_tasks(catalog, small_pool):
    first = _dump(list(TemplateEngine(catalog, 7).candidates(12)))
    again = _dump(list(TemplateEngine(PoolCatalog.open(Path(small_pool[0])), 7).candidates(12)))
    other = _dump(list(TemplateEngine(catalog, 8).candidates(12)))
    assert first == again and any(first)
    assert first != other


def test_drafts_are_long_multi_app_and_their_constraints_hold(catalog):
    drafts = [t for t in TemplateEngine(catalog, 3).candidates(20) if t is not None]
    assert len(drafts) >= 15
    kinds = set()
    for task in drafts:
        assert 1 <= len(task.reference) <= 30 and task.checklist
        assert set(task.toolkits) == {c.toolkit for c in task.reference}
        for constraint in task.constraints:
            kinds.add(constraint.kind)
            assert well_formed(constraint), constraint
            assert constraint_holds(constraint, task.reference) is True, (task.id, constraint)
            assert constraint.text in task.instruction
    assert {"order", "budget", "preference"} <= kinds
    assert sum(len(t.reference) >= 5 and len(t.apps) >= 2 for t in drafts) >= len(drafts) // 2


def test_constraint_checks_catch_violations():
    calls = [ReferenceCall(toolkit="a", tool="create", arguments={"day": "2026-01-05", "code": "X1"}),
             ReferenceCall(toolkit="a", tool="read", arguments={"id": "1"})]
    order = TaskConstraint(id="o", kind="order", text="t", check={"before": "create", "after": "read", "toolkit": "a"})
    assert constraint_holds(order, calls) is True
    assert constraint_holds(order, calls[::-1]) is False
    budget = TaskConstraint(id="b", kind="budget", text="t", check={"max_calls": 1})
    assert constraint_holds(budget, calls) is False
    deadline = TaskConstraint(id="d", kind="deadline", text="t",
                              check={"tool": "create", "argument": "day", "not_after": "2026-01-04"})
    assert constraint_holds(deadline, calls) is False
    fmt = TaskConstraint(id="f", kind="format", text="t",
                         check={"tool": "create", "argument": "code", "pattern": "^[a-z]+$"})
    assert constraint_holds(fmt, calls) is False
    assert constraint_holds(TaskConstraint(id="j", kind="preference", text="judge only"), calls) is None
    assert not well_formed(TaskConstraint(id="x", kind="format", text="t",
                                          check={"tool": "a", "argument": "b", "pattern": "("}))


class _Listed:
    name = "listed"

    def __init__(self, tasks: list[OpenWorldTask | None]) -> None:
        self.tasks = tasks

    async def stream(self, count: int) -> AsyncIterator[OpenWorldTask | None]:
        for task in self.tasks[:count]:
            yield task


def test_validation_keeps_green_references_and_counts_drops(catalog, pool_gecko):
    good = next(t for t in TemplateEngine(catalog, 5).candidates(20)
                if t is not None and len(t.reference) >= 5 and len(t.apps) >= 2)
    first = good.reference[0]
    rejected = good.model_copy(update={"id": "bad-args", "reference": (
        first.model_copy(update={"arguments": {**first.arguments, "not_an_argument": 1}}), *good.reference[1:])})
    unknown = good.model_copy(update={"id": "unknown-tool", "constraints": (), "reference": (
        first.model_copy(update={"tool": "no_such_tool"}), *good.reference[1:])})
    trivial = good.model_copy(update={"id": "short", "reference": good.reference[:2]})
    duplicate = good.model_copy(update={"id": "again"})
    reads = {(e["toolkit"], e["operation_id"]) for e in catalog.entries if e["access"] != "write"}
    at = next(i for i, c in enumerate(good.reference) if (c.toolkit, c.tool) in reads)
    repeated = good.model_copy(update={"id": "read-twice", "reference": (  # nothing changes between: the judge fails it
        *good.reference[:at + 1], good.reference[at], *good.reference[at + 1:])})

    async def run() -> TaskSetResult:
        async with GeckoClient(pool_gecko) as client:
            return await make_taskset(_Listed([good, rejected, unknown, trivial, duplicate, None, repeated]), catalog,
                                      client, 7, seed=5)

    result = asyncio.run(run())
    assert [t.id for t in result.tasks] == [good.id]
    assert result.manifest.generated == 7 and result.manifest.kept == 1
    assert result.manifest.dropped == {"duplicate": 1, "judge_failed": 1, "no_chain": 1, "reference_rejected": 2,
                                       "trivial": 1}


def test_command_writes_a_validated_task_set(small_pool, pool_gecko, tmp_path, capsys):
    out = tmp_path / "set"
    assert main(["tasks", "--pool", str(small_pool[0]), "--out", str(out), "--count", "15", "--seed", "4",
                 "--gecko", pool_gecko]) == 0
    summary = json.loads(capsys.readouterr().out)
    manifest = TaskSetManifest.model_validate_json((out / "taskset.json").read_text())
    tasks = list(read_tasks(out))
    assert manifest.generated == 15 == summary["generated"] and manifest.kept == len(tasks) == summary["kept"] > 0
    assert manifest.kept + sum(manifest.dropped.values()) == manifest.generated
    assert summary["tasks_per_hour"] > 0 and manifest.engine == "template" and manifest.seed == 4
    writes = {(e["toolkit"], e["operation_id"]) for e in PoolCatalog.open(Path(small_pool[0])).entries
              if e["access"] == "write"}
    for task in tasks:
        assert 5 <= len(task.reference) <= 30 and len(set(task.apps)) >= 2
        assert any((c.toolkit, c.tool) in writes for c in task.reference)
        assert all(constraint_holds(c, task.reference) is not False for c in task.constraints)

    async def replay() -> list[int]:
        async with GeckoClient(pool_gecko) as client:
            statuses = []
            for task in tasks:
                session = await client.create_session({}, task.initial_state or {})
                for call in task.reference:
                    reply = await client.call_tool(session.session_id, call.toolkit, call.tool, call.arguments)
                    statuses.append(200 if reply.ok and not reply.tool_error else reply.status)
            return statuses

    assert set(asyncio.run(replay())) == {200}
    again = tmp_path / "again"
    assert main(["tasks", "--pool", str(small_pool[0]), "--out", str(again), "--count", "15", "--seed", "4",
                 "--gecko", pool_gecko]) == 0
    assert (again / "tasks.jsonl").read_bytes() == (out / "tasks.jsonl").read_bytes()


@pytest.mark.slow
def test_command_starts_its_own_gecko(small_pool, tmp_path, capsys):
    assert main(["tasks", "--pool", str(small_pool[0]), "--out", str(tmp_path), "--count", "3", "--seed", "1",
                 "--workers", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["generated"] == 3


def test_bad_arguments(tmp_path, capsys):
    assert main(["tasks", "--pool", str(tmp_path), "--out", str(tmp_path / "o"), "--count", "0"]) == 2
    assert main(["tasks", "--pool", str(tmp_path), "--out", str(tmp_path / "o"), "--gecko", "http://x"]) == 1
    assert "gecko pool build" in capsys.readouterr().err


def test_a_gecko_that_does_not_answer_stops_the_command(small_pool, tmp_path, capsys):
    from utils.procs import free_port

    assert main(["tasks", "--pool", str(small_pool[0]), "--out", str(tmp_path / "o"), "--count", "2",
                 "--gecko", f"http://127.0.0.1:{free_port()}"]) == 1
    assert "gecko openworld: error:" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_llm_engine_against_the_stub(small_pool, pool_gecko, tmp_path, capsys):
    from utils.llm_stub.testing import run_stub

    with run_stub() as stub:
        out = tmp_path / "llm"
        args = ["tasks", "--pool", str(small_pool[0]), "--out", str(out), "--count", "6", "--seed", "2",
                "--engine", "llm", "--model", stub.model(), "--gecko", pool_gecko]
        assert main(args) == 0
        summary = json.loads(capsys.readouterr().out)
        assert stub.stats()["by_stage"], "the stub was never asked"
    manifest = TaskSetManifest.model_validate_json((out / "taskset.json").read_text())
    assert manifest.engine == "llm" and manifest.model == stub.model() and summary["generated"] == 6
    assert manifest.kept + sum(manifest.dropped.values()) == 6
    for task in read_tasks(out):
        assert task.origin["engine"] == "llm" and task.origin["prompt"].startswith("openworld-task-")
        assert 5 <= len(task.reference) <= 30 and len(set(task.apps)) >= 2
        assert all(constraint_holds(c, task.reference) is not False for c in task.constraints)


def test_llm_engine_needs_a_model(small_pool, tmp_path, capsys):
    assert main(["tasks", "--pool", str(small_pool[0]), "--out", str(tmp_path), "--engine", "llm",
                 "--gecko", "http://127.0.0.1:9"]) == 1
    assert "--model" in capsys.readouterr().err
