"""Typed BFCL tasks read from the data shipped in the installed `bfcl-eval` package, and task selection.

The question files (`BFCL_v4_<category>.json`) and their ground truth (`possible_answer/...`) are JSON Lines,
read through `importlib.resources`, so nothing in `bfcl_eval` with import-time side effects is imported.
Multi-turn entries carry no function docs; like `bfcl_eval.utils.populate_test_cases_with_predefined_functions`
they get the func-doc files of their `involved_classes`, in that order, with the `missed_function` docs of
`multi_turn_miss_func` moved out of the list and kept per turn. Descriptions are left as in the files (the
evaluation form); `runtime.prompt_functions` adds the language hint the official generator shows models.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from bfcl_eval.constants.default_prompts import ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT
from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

from benchmarks.bfcl.categories import (
    category_group,
    category_of_id,
    has_ground_truth,
    is_multi_turn,
    is_web_search,
    question_file_name,
)
from benchmarks.runner.selection import read_ids_file

FunctionDoc = dict[str, Any]
"""One BFCL function doc: `{"name", "description", "parameters": {"type": "dict", "properties", "required"}}`."""
GroundTruthCall = dict[str, dict[str, list[Any]]]
"""One expected single-turn call: `{func_name: {param: [allowed values...]}}`; `""` allowed means omittable."""


class TaskSelectionError(ValueError):
    """A requested task id does not exist in the category, or the selection arguments conflict."""


@dataclass(frozen=True)
class Message:
    """One chat message of a BFCL question."""

    role: str
    """`user`, `system` or (a few live_irrelevance entries) `assistant`."""
    content: str


@dataclass(frozen=True)
class SingleTurnTask:
    """A single-turn BFCL entry (simple_python, multiple, parallel, irrelevance and the live ones)."""

    id: str
    category: str
    messages: tuple[Message, ...]
    """The one turn of the conversation (live entries may start with a system message)."""
    functions: tuple[FunctionDoc, ...]
    """Function docs offered to the model, as in the data file (no language hint)."""
    ground_truth: tuple[GroundTruthCall, ...] | None
    """Expected calls for the AST checker; None for the irrelevance categories (correct iff no call)."""

    @property
    def turns(self) -> tuple[tuple[Message, ...], ...]:
        """The conversation as a one-turn sequence, so single- and multi-turn tasks can be walked alike."""
        return (self.messages,)

    @property
    def toolkits(self) -> tuple[str, ...]:
        """Toolkit names: one generated toolkit per single-turn task, named by the task id."""
        return (self.id,)

    @property
    def is_multi_turn(self) -> bool:
        """Always False."""
        return False


@dataclass(frozen=True)
class MultiTurnTask:
    """A multi-turn BFCL entry executed on the stateful tool classes of `bfcl-eval`."""

    id: str
    category: str
    turns: tuple[tuple[Message, ...], ...]
    """User messages per turn. In miss_func one turn is empty: there the held-out functions are added."""
    functions: tuple[FunctionDoc, ...]
    """Docs of all involved classes in `involved_classes` order, minus the held-out ones."""
    ground_truth: tuple[tuple[str, ...], ...]
    """Gold call strings per turn (`cd(folder='document')`, sometimes positional); empty turns expect no call."""
    initial_config: Mapping[str, Any]
    """Per-class scenario passed to `_load_scenario`; a class missing here starts from its defaults."""
    involved_classes: tuple[str, ...]
    missed_functions: Mapping[int, tuple[FunctionDoc, ...]] = field(default_factory=dict)
    """miss_func only: docs held out until the given turn index, when the official runner offers them."""
    excluded_functions: tuple[str, ...] = ()
    """Metadata in the data (`excluded_function`); the official 2026.3.23 code never reads it."""

    @property
    def toolkits(self) -> tuple[str, ...]:
        """Toolkit names: one class toolkit per involved class (`data/bfcl/openapi/multi_turn/<Class>.json`)."""
        return self.involved_classes

    @property
    def is_multi_turn(self) -> bool:
        """Always True."""
        return True

    @property
    def long_context(self) -> bool:
        """Whether the tool classes load the long-context extension, as the official executor decides it."""
        return "long_context" in self.category

    def functions_at_turn(self, turn: int) -> tuple[FunctionDoc, ...]:
        """Docs offered at `turn`: the base docs plus every held-out doc released at or before it."""
        released = [
            doc for index, docs in sorted(self.missed_functions.items()) if index <= turn for doc in docs
        ]
        return self.functions + tuple(released)


@dataclass(frozen=True)
class WebSearchTask(MultiTurnTask):
    """A web_search entry (agentic): one turn with the `WebSearchAPI` class, scored on the final answer's text.

    `initial_config` sets `show_snippet` (False in web_search_no_snippet), as the official generator does; the
    turn starts with the official answer-format system prompt. `ground_truth` is one turn with no expected call.
    """

    answers: tuple[str, ...] = ()
    """Accepted answers: one must appear in the final message (the official agentic checker)."""


BfclTask = SingleTurnTask | MultiTurnTask


def data_root() -> Traversable:
    """The data directory of the installed `bfcl_eval` package."""
    return files("bfcl_eval") / "data"


def _read_jsonl(resource: Traversable) -> list[dict[str, Any]]:
    text = resource.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _messages(turn: Iterable[Mapping[str, Any]]) -> tuple[Message, ...]:
    return tuple(Message(role=str(m["role"]), content=str(m["content"])) for m in turn)


def load_class_functions(class_name: str) -> list[FunctionDoc]:
    """Function docs of one multi-turn tool class, from its `multi_turn_func_doc` file.

    Raises:
        KeyError: `class_name` is not a class known to `bfcl-eval`.
    """
    file_name = MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name]
    return _read_jsonl(data_root() / "multi_turn_func_doc" / file_name)


def _multi_turn_functions(
    involved_classes: Sequence[str], missed: Mapping[str, Sequence[str]]
) -> tuple[list[FunctionDoc], dict[int, tuple[FunctionDoc, ...]]]:
    functions = [doc for class_name in involved_classes for doc in load_class_functions(class_name)]
    held_out: dict[int, tuple[FunctionDoc, ...]] = {}
    for turn, names in missed.items():
        taken: list[FunctionDoc] = []
        for name in names:
            index = next((i for i, doc in enumerate(functions) if doc["name"] == name), None)
            if index is not None:
                taken.append(functions.pop(index))
        held_out[int(turn)] = tuple(taken)
    return functions, held_out


def _single_turn_task(entry: dict[str, Any], answer: dict[str, Any] | None, category: str) -> SingleTurnTask:
    return SingleTurnTask(
        id=entry["id"],
        category=category,
        messages=_messages(entry["question"][0]),
        functions=tuple(entry["function"]),
        ground_truth=None if answer is None else tuple(answer["ground_truth"]),
    )


def _multi_turn_task(entry: dict[str, Any], answer: dict[str, Any], category: str) -> MultiTurnTask:
    involved = tuple(entry["involved_classes"])
    functions, held_out = _multi_turn_functions(involved, entry.get("missed_function", {}))
    return MultiTurnTask(
        id=entry["id"],
        category=category,
        turns=tuple(_messages(turn) for turn in entry["question"]),
        functions=tuple(functions),
        ground_truth=tuple(tuple(turn) for turn in answer["ground_truth"]),
        initial_config=entry["initial_config"],
        involved_classes=involved,
        missed_functions=held_out,
        excluded_functions=tuple(entry.get("excluded_function", ())),
    )


def _web_search_tasks(category: str) -> list[BfclTask]:
    root = data_root()
    entries = _read_jsonl(root / question_file_name("web_search"))
    answers = {a["id"]: a for a in _read_jsonl(root / "possible_answer" / question_file_name("web_search"))}
    system = Message(role="system", content=ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT)
    tasks: list[BfclTask] = []
    for entry in entries:
        involved = tuple(entry["involved_classes"])
        turn = (system, *_messages(entry["question"][0]))
        tasks.append(WebSearchTask(
            id=entry["id"].replace("web_search", category), category=category, turns=(turn,),
            functions=tuple(doc for name in involved for doc in load_class_functions(name)), ground_truth=((),),
            initial_config={involved[0]: {"show_snippet": "no_snippet" not in category}}, involved_classes=involved,
            answers=tuple(str(a) for a in answers[entry["id"]]["ground_truth"])))
    return tasks


def load_category(category: str) -> list[BfclTask]:
    """All tasks of one category, in file order.

    Raises:
        UnknownCategoryError: `category` is not supported.
        ValueError: the question and ground-truth files disagree (count or ids).
    """
    category_group(category)
    if is_web_search(category):
        return _web_search_tasks(category)
    root = data_root()
    entries = _read_jsonl(root / question_file_name(category))
    if not has_ground_truth(category):
        return [_single_turn_task(entry, None, category) for entry in entries]
    answers = _read_jsonl(root / "possible_answer" / question_file_name(category))
    if [e["id"] for e in entries] != [a["id"] for a in answers]:
        raise ValueError(f"{category}: question and ground-truth files list different ids")
    if is_multi_turn(category):
        return [_multi_turn_task(e, a, category) for e, a in zip(entries, answers, strict=True)]
    return [_single_turn_task(e, a, category) for e, a in zip(entries, answers, strict=True)]


def _resolve_id(raw: str, category: str, known: Mapping[str, Any], by_index: Mapping[str, str]) -> str:
    if raw in known:
        return raw
    if category_of_id(raw) != category:
        candidate = f"{category}_{raw}"
        if candidate in known:
            return candidate
        if raw in by_index:
            return by_index[raw]
    raise TaskSelectionError(f"task id {raw!r} is not in category {category}")


def _index_aliases(ids: Iterable[str]) -> dict[str, str]:
    """Short numeric aliases of live ids: `7` -> `live_simple_7-3-0` (the leading index is unique)."""
    aliases: dict[str, str] = {}
    for task_id in ids:
        index = task_id.rsplit("_", 1)[1]
        if "-" in index:
            aliases[index.split("-", 1)[0]] = task_id
    return aliases


def select_tasks(
    tasks: Sequence[BfclTask], *, ids: Sequence[str] | None = None, num_tasks: int | None = None
) -> list[BfclTask]:
    """Pick tasks of one category: all of them, or the given ids (in file order), then the first `num_tasks`.

    Ids may be full (`simple_python_3`) or short: `3` gets the category prefix, and for live categories `3`
    or `3-1-0` matches `live_simple_3-1-0`.

    Raises:
        TaskSelectionError: an id is not in the category, or `num_tasks` is negative.
    """
    if num_tasks is not None and num_tasks < 0:
        raise TaskSelectionError("num_tasks must be >= 0")
    selected = list(tasks)
    if ids is not None and selected:
        category = selected[0].category
        known = {task.id: task for task in selected}
        aliases = _index_aliases(known)
        wanted = {_resolve_id(raw.strip(), category, known, aliases) for raw in ids if raw.strip()}
        selected = [task for task in selected if task.id in wanted]
    elif ids:
        raise TaskSelectionError("ids were given but the category has no tasks")
    return selected if num_tasks is None else selected[:num_tasks]


def load_tasks(
    category: str,
    *,
    ids: Sequence[str] | None = None,
    ids_file: Path | None = None,
    num_tasks: int | None = None,
) -> list[BfclTask]:
    """Load a category and select tasks from it (see `select_tasks`); `ids` and `ids_file` are exclusive.

    Raises:
        TaskSelectionError: both `ids` and `ids_file` were given, or an id is unknown.
    """
    if ids is not None and ids_file is not None:
        raise TaskSelectionError("give either ids or ids_file, not both")
    if ids_file is not None:
        ids = read_ids_file(ids_file)
    return select_tasks(load_category(category), ids=ids, num_tasks=num_tasks)
