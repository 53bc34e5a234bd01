"""BFCL category names, groups and file names, as the installed `bfcl-eval` data and `bfcl evaluate` use them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from bfcl_eval.constants.category_mapping import VERSION_PREFIX

Group = Literal["non_live", "live", "multi_turn", "agentic"]

NON_LIVE_CATEGORIES: tuple[str, ...] = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance",
)
LIVE_CATEGORIES: tuple[str, ...] = (
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance",
)
SINGLE_TURN_CATEGORIES: tuple[str, ...] = NON_LIVE_CATEGORIES + LIVE_CATEGORIES
MULTI_TURN_CATEGORIES: tuple[str, ...] = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
WEB_SEARCH_CATEGORIES: tuple[str, ...] = ("web_search_base", "web_search_no_snippet")
"""The 100 web_search questions, asked with the search tool's snippets shown and without (`show_snippet`)."""
MEMORY_CATEGORIES: tuple[str, ...] = ("memory_kv", "memory_vector", "memory_rec_sum")
"""The 155 memory questions per backend, each after its scenario's prerequisite conversations (`memory.py`). Their runner
is `memory_benchmark.BfclMemory` (`gecko bfcl-memory`), not the stateful multi-turn one: so not in
`AGENTIC_CATEGORIES`."""
AGENTIC_CATEGORIES: tuple[str, ...] = WEB_SEARCH_CATEGORIES
FORMAT_SENSITIVITY_CATEGORY = "format_sensitivity"
"""Reported by the leaderboard, never weighed into the overall (the official runner's non-scoring category)."""
ALL_CATEGORIES: tuple[str, ...] = SINGLE_TURN_CATEGORIES + MULTI_TURN_CATEGORIES + AGENTIC_CATEGORIES
IRRELEVANCE_CATEGORIES: frozenset[str] = frozenset({"irrelevance", "live_irrelevance"})
RELEVANCE_CATEGORIES: frozenset[str] = frozenset({"live_relevance"})
"""Scored as "correct iff the model made a call" (no ground truth; any decodable, non-empty call passes)."""

LEADERBOARD_GROUPS: tuple[str, ...] = ("non_live", "live", "multi_turn", "agentic")
"""The leaderboard's groups, as `--group` names them (agentic: memory and web_search, not run by Gecko yet)."""

CATEGORY_COLLECTIONS: dict[str, tuple[str, ...]] = {
    "all": ALL_CATEGORIES,
    "single_turn": SINGLE_TURN_CATEGORIES,
    "multi_turn": MULTI_TURN_CATEGORIES,
    "live": LIVE_CATEGORIES,
    "non_live": NON_LIVE_CATEGORIES,
    "web_search": WEB_SEARCH_CATEGORIES,
    "agentic": AGENTIC_CATEGORIES,
}
"""Names accepted by `--test-category` besides single category names."""

_RESULT_FILE = re.compile(rf"^{re.escape(VERSION_PREFIX)}_(\w+?)_result\.json$")


class UnknownCategoryError(ValueError):
    """A category or collection name that this package does not support."""


def is_multi_turn(category: str) -> bool:
    """Whether `category` is one of the multi-turn categories."""
    return category in MULTI_TURN_CATEGORIES


def is_web_search(category: str) -> bool:
    """Whether `category` is one of the web_search categories (agentic: scored on the final answer's text)."""
    return category in WEB_SEARCH_CATEGORIES


def is_memory(category: str) -> bool:
    """Whether `category` is one of the memory categories (agentic: scored on the final answer's text)."""
    return category in MEMORY_CATEGORIES


def is_irrelevance(category: str) -> bool:
    """Whether `category` is scored as "correct iff the model made no call"."""
    return category in IRRELEVANCE_CATEGORIES


def is_relevance(category: str) -> bool:
    """Whether `category` is scored as "correct iff the model made at least one call"."""
    return category in RELEVANCE_CATEGORIES


def has_ground_truth(category: str) -> bool:
    """Whether `category` ships a `possible_answer/` file (not the (ir)relevance ones)."""
    return not (is_irrelevance(category) or is_relevance(category))


def category_group(category: str) -> Group:
    """The group a category belongs to; also the sub-directory `bfcl generate` writes it to.

    Raises:
        UnknownCategoryError: `category` is not supported.
    """
    if category in NON_LIVE_CATEGORIES:
        return "non_live"
    if category in LIVE_CATEGORIES:
        return "live"
    if category in MULTI_TURN_CATEGORIES:
        return "multi_turn"
    if category in AGENTIC_CATEGORIES or is_memory(category):
        return "agentic"
    raise UnknownCategoryError(f"unsupported BFCL category {category!r}; known: {', '.join(ALL_CATEGORIES)}")


def category_dir(category: str) -> str:
    """The directory `bfcl generate` writes a category's result file to, and `bfcl evaluate` its score file:
    the group, and for memory `agentic/memory/<backend>`.

    Raises:
        UnknownCategoryError: `category` is not supported.
    """
    group = category_group(category)
    return f"{group}/memory/{category.removeprefix('memory_')}" if is_memory(category) else group


def expand_categories(names: Iterable[str]) -> list[str]:
    """Expand collection names (`all`, `live`, ...) and category names into categories, in canonical order.

    Raises:
        UnknownCategoryError: a name is neither a collection nor a supported category.
    """
    wanted: set[str] = set()
    for name in names:
        if name in CATEGORY_COLLECTIONS:
            wanted.update(CATEGORY_COLLECTIONS[name])
        elif name in ALL_CATEGORIES:
            wanted.add(name)
        else:
            choices = ", ".join([*CATEGORY_COLLECTIONS, *ALL_CATEGORIES])
            raise UnknownCategoryError(f"unknown test category {name!r}; choose from: {choices}")
    return [category for category in ALL_CATEGORIES if category in wanted]


def category_of_id(task_id: str) -> str:
    """The category encoded in a task id (`live_simple_3-2-0` -> `live_simple`)."""
    return task_id.rsplit("_", 1)[0]


def id_sort_key(task_id: str) -> tuple[str, int, str]:
    """Sort key ordering ids by category, then by their leading index, as `bfcl evaluate` does."""
    category, _, index = task_id.rpartition("_")
    head = index.split("-", 1)[0]
    return (category, int(head) if head.isdigit() else -1, index)


def question_file_name(category: str) -> str:
    """File name of a category's questions (and of its ground truth under `possible_answer/`)."""
    return f"{VERSION_PREFIX}_{category}.json"


def result_file_name(category: str) -> str:
    """File name `bfcl evaluate` looks for: `BFCL_v4_<category>_result.json`."""
    return f"{VERSION_PREFIX}_{category}_result.json"


def score_file_name(category: str) -> str:
    """File name of a category's score file: `BFCL_v4_<category>_score.json`."""
    return f"{VERSION_PREFIX}_{category}_score.json"


def category_of_result_file(file_name: str) -> str | None:
    """The category named by a result file name, or None if the name is not a result file name."""
    match = _RESULT_FILE.match(file_name)
    return match.group(1) if match else None
