"""BFCL V4 memory through `gecko bfcl-memory` on a real Gecko (the memory classes' toolkits, rules engines): the tasks
as the official loader builds them, the prerequisite conversations played first (GATS rehearsals on Gecko, then
bfcl-eval's own memory classes; snapshots carry the memory to the questions), the result files in the layout
`bfcl generate` leaves, our score as `bfcl evaluate` scores agentic entries (and, slow, `bfcl evaluate` itself
agreeing); the vector backend on FAISS and all-MiniLM-L6-v2 (Gecko's numpy stand-in for sentence-transformers), and
`untested` (never scored) where FAISS is missing."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bfcl import memory_oracle
from benchmarks.bfcl.categories import category_dir
from benchmarks.bfcl.memory import backend_problem, load_memory_tasks, score_memory
from benchmarks.bfcl.memory_benchmark import MEMORY_OPENAPI_DIR
from benchmarks.bfcl.memory_run import Rehearsal, play_entry
from benchmarks.bfcl.multi_agents import MULTI_TURN_SYSTEM_PROMPT
from benchmarks.bfcl.official import bfcl_venv
from benchmarks.bfcl.sentence_standin import VECTOR_MODULE
from benchmarks.runner.summary import EXIT_OK, EXIT_UNSCORED
from gats import GatsConfig
from gats.turns import TurnAgents
from gecko_cli.main import main as gecko_main
from inference.agents import LLMPlannerModel, PlannerAgent
from inference.gecko import GeckoClient
from tests.infra import missing
from utils.llm import load_prompt
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub, stub_client
from utils.paths import REPO_ROOT
from utils.procs import gecko_server

ORACLE = "scripted-oracle"


@pytest.fixture(scope="module")
def memory_gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Gecko on the memory toolkits, rules state model (the offline multi-turn setting)."""
    if not (MEMORY_OPENAPI_DIR / "MemoryAPI_kv.json").exists():
        missing("the BFCL memory toolkits are not built (make toolkits / scripts/build_toolkits.py)")
    state = tmp_path_factory.mktemp("memory-gecko")
    with gecko_server([MEMORY_OPENAPI_DIR], workers=2, state_dir=state, extra=["--state-model", "rules"],
                      log_path=state / "server.log") as url:
        yield url


def _run(url: str, tmp_path: Path, *args: str, code: int = EXIT_OK) -> Path:
    assert gecko_main(["bfcl-memory", "--model", ORACLE, "--output-dir", str(tmp_path), "--no-progress",
                       "--gecko-url", url, *args]) == code
    (run_dir,) = tmp_path.iterdir()
    return run_dir


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_tasks_are_the_official_entries_with_their_scenarios_prerequisites() -> None:
    tasks = load_memory_tasks("memory_kv")
    assert len(tasks) == 155 and tasks[0].id == "memory_kv_0-customer-0" and tasks[-1].id.endswith("-notetaker-24")
    first = tasks[0]
    assert first.question.ground_truth == ("Michael",)
    assert first.question.turns[0][0]["role"] == "system" and "'answer'" in first.question.turns[0][0]["content"]
    assert [p.id for p in first.prereqs][:2] == ["memory_kv_prereq_0-customer-0", "memory_kv_prereq_1-customer-1"]
    assert all(p.scenario == "customer" and len(p.turns) > 1 for p in first.prereqs)
    assert {doc["name"] for doc in first.question.functions} >= {"archival_memory_add", "core_memory_retrieve"}
    assert sum(len({p.id for p in t.prereqs}) for t in tasks if t.question.index == 0) == 37
    rec_sum = load_memory_tasks("memory_rec_sum")[0]
    assert {doc["name"] for doc in rec_sum.question.functions} >= {"memory_append", "memory_retrieve"}


def test_the_memory_toolkits_declare_what_the_classes_do() -> None:
    """Access kinds observed on the real classes (a write changed the memory), the empty memory as default state."""
    if not (MEMORY_OPENAPI_DIR / "MemoryAPI_vector.json").exists():
        missing("the BFCL memory toolkits are not built (make toolkits / scripts/build_toolkits.py)")
    empty_store = {"next_id": 0, "store": {}}
    reads = {}
    for name, state, tools in (
            ("MemoryAPI_kv", {"core_memory": {}, "archival_memory": {}}, 15),
            ("MemoryAPI_vector", {"core_memory": empty_store, "archival_memory": empty_store}, 12),
            ("MemoryAPI_rec_sum", {"memory": ""}, 5)):
        document = json.loads((MEMORY_OPENAPI_DIR / f"{name}.json").read_text())
        assert document["info"]["x-gecko-default-state"] == state and len(document["paths"]) == tools
        reads[name] = {path.strip("/") for path, op in document["paths"].items()
                       if op["post"]["x-gecko-access"] == "read"}
    assert reads == {
        "MemoryAPI_kv": {"archival_memory_key_search", "archival_memory_list_keys", "archival_memory_retrieve",
                         "core_memory_key_search", "core_memory_list_keys", "core_memory_retrieve",
                         "core_memory_retrieve_all"},
        "MemoryAPI_vector": {"archival_memory_retrieve", "archival_memory_retrieve_all", "core_memory_retrieve",
                             "core_memory_retrieve_all"},
        "MemoryAPI_rec_sum": {"memory_retrieve"}}


@pytest.mark.integration
@pytest.mark.parametrize("category", ["memory_kv", "memory_vector", "memory_rec_sum"])
def test_the_oracle_answers_from_the_memory_its_prerequisites_left(memory_gecko: str, tmp_path: Path,
                                                                   category: str) -> None:
    """The oracle writes each answer during a different prerequisite conversation and reads it back in the question
    from the real memory: 1.0 only if the prerequisites ran first and each snapshot reached the next entry (vector:
    and the question's embedding found its answer's text among the stored ones by FAISS search)."""
    problem = backend_problem(category)
    if problem is not None:  # vector needs FAISS and the packaged model (make setup installs both)
        missing(f"{category} cannot run here: {problem}")
    run_dir = _run(memory_gecko, tmp_path, "--category", category, "--num-tasks", "4")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["evaluation"]["categories"][category] | {"result_file": None} == {
        "accuracy": 1.0, "correct": 4, "scored": 4, "dataset_size": 155, "result_file": None}
    folder = run_dir / "result" / ORACLE / category_dir(category)
    assert category_dir(category) == f"agentic/memory/{category.removeprefix('memory_')}"
    lines = _lines(folder / f"BFCL_v4_{category}_result.json")
    assert [line["id"] for line in lines] == [f"{category}_{i}-customer-{i}" for i in range(4)]
    first = lines[0]["result"]
    assert isinstance(first, list) and len(first) == 1 and "Michael" in first[0][-1] and first[0][0].startswith("[")
    prereqs = _lines(folder / f"BFCL_v4_{category}_prereq_result.json")
    assert len(prereqs) == 10 and all(line["id"].startswith(f"{category}_prereq_") for line in prereqs)
    final = json.loads((folder / "memory_snapshot" / "customer_final.json").read_text())
    assert "Michael" in json.dumps(final)
    trace = json.loads((run_dir / f"traces_{category}.jsonl").read_text().splitlines()[0])
    turn = (trace.get("trace") or trace)["turns"][0]
    assert turn["simulated"]["attempts"] and turn["real"]["calls"]  # rehearsed on Gecko, then run for real


@pytest.mark.integration
def test_a_question_that_cannot_recall_its_answer_is_wrong(memory_gecko: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Break the memory chain (the oracle's reads find nothing): every answer is 'I do not know', scored 0."""
    monkeypatch.setattr(memory_oracle, "recalled", lambda category, index, content: None)
    run_dir = _run(memory_gecko, tmp_path, "--category", "kv", "--num-tasks", "2")
    metrics = json.loads((run_dir / "summary.json").read_text())["evaluation"]["categories"]["memory_kv"]
    assert (metrics["correct"], metrics["scored"]) == (0, 2)


STUB_PLANS = [
    {"match": "My name is Michael", "steps": [
        {"tool_calls": [{"name": "core_memory_add", "arguments": {"key": "first_name", "value": "Michael"}}]},
        {"content": "Nice to meet you, Michael."}]},
    {"match": "What is my first name", "steps": [
        {"tool_calls": [{"name": "core_memory_retrieve", "arguments": {"key": "first_name"}}]},
        {"content": "{'answer': 'Michael', 'context': 'from my core memory'}"}]},
]


@pytest.mark.integration
async def test_an_llm_planner_writes_in_a_prerequisite_and_reads_in_the_question(memory_gecko: str,
                                                                                 tmp_path: Path) -> None:
    """The LLM path on the stub: each turn rehearsed on Gecko, then run on the real MemoryAPI_kv; the prerequisite's
    write reaches the question through the snapshot, and the exported steps end with the answer."""
    task = load_memory_tasks("memory_kv")[0]
    prereq = dataclasses.replace(task.prereqs[0], turns=(({"role": "user", "content": "My name is Michael."},),))
    with run_stub(StubConfig(plans=STUB_PLANS)) as stub:
        llm = stub_client(stub)
        planner = PlannerAgent(LLMPlannerModel(llm, stub.model("stub")),
                               system_prompt=load_prompt(MULTI_TURN_SYSTEM_PROMPT), max_steps=6)
        async with GeckoClient(memory_gecko) as gecko:
            rehearsal = Rehearsal(gecko, GatsConfig(max_retries=1))
            agents = lambda entry: TurnAgents(simulated=lambda i: planner, real=lambda i, plan: planner)  # noqa: E731
            wrote = await play_entry(prereq, agents, tmp_path, rehearsal)
            asked = await play_entry(task.question, agents, tmp_path, rehearsal)
        await llm.aclose()
    assert wrote.steps == (("[core_memory_add(key='first_name', value='Michael')]", "Nice to meet you, Michael."),)
    assert wrote.trace[0]["simulated"]["attempts"] and wrote.trace[0]["real"]["calls"]
    assert asked.steps is not None and asked.steps[0][0] == "[core_memory_retrieve(key='first_name')]"
    assert asked.trace[0]["real"]["calls"][0]["result"] == '{"value": "Michael"}'  # the real memory, not Gecko's
    assert score_memory(task, asked.record().result).valid


def test_score_follows_the_official_agentic_rules() -> None:
    task = load_memory_tasks("memory_kv")[1]  # gold: "35" or "thirty five"
    call = "[archival_memory_retrieve(key='age')]"
    assert score_memory(task, [[call, "{'answer': 'Thirty Five.', 'context': 'x'}"]]).valid  # case, dots ignored
    assert score_memory(task, [["{'answer': '35', 'context': 'x'}", call]]).valid  # the last message, not the last step
    assert not score_memory(task, [[call, "{'answer': '350', 'context': 'x'}"]]).valid  # whole words only
    assert score_memory(task, [[call]]).error_type == "agentic:no_last_message"
    assert score_memory(task, [["35"], ["35"]]).error_type == "agentic:inference_error"


@pytest.mark.integration
def test_the_vector_backend_is_untested_not_scored_without_faiss(memory_gecko: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, VECTOR_MODULE, raising=False)
    monkeypatch.setitem(sys.modules, "faiss", None)  # as if faiss-cpu were not installed
    run_dir = _run(memory_gecko, tmp_path, "--category", "vector", "--num-tasks", "2", code=EXIT_UNSCORED)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["groups"]["memory_vector"]["untested"], summary["groups"]["memory_vector"]["score"]) == (2, None)
    assert "backend_unavailable" in json.dumps(summary) and "faiss-cpu" in json.dumps(summary)
    assert not (run_dir / "result" / ORACLE / "agentic" / "memory" / "vector").exists()


def test_without_faiss_the_toolkit_build_leaves_the_vector_class_out() -> None:
    """`make toolkits` on a machine without FAISS: the other memory toolkits are built, the vector one is named as
    left out (its tasks are untested), and the build does not fail."""
    code = ("import sys; sys.modules['faiss'] = None; sys.path.insert(0, 'scripts'); import bfcl_memory_toolkits as m; "
            "print([name for name, _ in m.memory_documents()])")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['MemoryAPI_kv', 'MemoryAPI_rec_sum']"
    assert "no toolkit for MemoryAPI_vector" in done.stderr and "faiss" in done.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "scripted-noisy"], "no memory script"),
    (["--category", "memory_foo"], "not a memory category"),
    (["--group", "live"], "memory categories only"),
])
def test_refused_settings_say_why(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                  message: str) -> None:
    argv = ["bfcl-memory", "--model", ORACLE, "--output-dir", str(tmp_path), "--no-progress", *args]
    assert gecko_main(argv) != 0
    assert message in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(1200)
def test_bfcl_evaluate_agrees_with_our_counts_right_and_wrong(memory_gecko: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`gecko score --official` runs `bfcl evaluate` on the result files: the same correct and scored counts for each
    backend, with one wrong answer in each (the oracle forgets question 1)."""
    bfcl_venv().ensure()
    real = memory_oracle.recalled
    monkeypatch.setattr(memory_oracle, "recalled",
                        lambda category, index, content: None if index == 1 else real(category, index, content))
    run_dir = _run(memory_gecko, tmp_path, "--category", "all", "--num-tasks", "3")
    capsys.readouterr()
    assert gecko_main(["score", "--official", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "the official tools agree with our figures" in out
    for category in ("memory_kv", "memory_vector", "memory_rec_sum"):
        assert f"{category} correct" in out
    metrics = json.loads((run_dir / "summary.json").read_text())["evaluation"]["categories"]
    assert {c: (m["correct"], m["scored"]) for c, m in metrics.items()} == {
        "memory_kv": (2, 3), "memory_vector": (2, 3), "memory_rec_sum": (2, 3)}
