"""BFCL toolkits as OpenAPI documents: one per single-turn task, one per multi-turn class.

Single-turn: the task's own function docs, converted as they are (`gecko.convert.from_bfcl`; the Java and
JavaScript docs of simple_java / simple_javascript with their parameters as strings of source, as BFCL's checker
reads them); BFCL declares no results, so each tool has the generic result schema. Multi-turn: the class's function
docs with the docs' `response` block as the success result, plus the error object every BFCL class
returns on failure (`{"error": "…"}`), `x-gecko-access` from `bfcl_multi_turn.derive_access`, and
the class's default state in `info.x-gecko-default-state`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from bfcl_multi_turn import default_state, derive_access, new_instance
from bfcl_source import (
    MULTI_TURN_CATEGORY,
    MULTI_TURN_CLASSES,
    SINGLE_TURN_CATEGORIES,
    SourceFile,
    answer_file,
    func_doc_file,
    multi_turn_tasks,
    package_version,
    question_file,
)

from benchmarks.bfcl.languages import call_language
from benchmarks.bfcl.state_map import instance_state
from gecko.convert import ToolSpec, from_bfcl, toolkit_document
from gecko.convert.bfcl import bfcl_tools

ERROR_RESULT: dict[str, Any] = {
    "type": "object",
    "description": "The call failed; BFCL's tool classes report failures this way.",
    "properties": {"error": {"type": "string", "description": "What went wrong."}},
    "required": ["error"],
}


def _source(**extra: str) -> dict[str, str]:
    return {"benchmark": "bfcl", "package": "bfcl-eval", "package_version": package_version(), **extra}


def single_turn_inputs() -> list[SourceFile]:
    """The data files the single-turn toolkits are built from."""
    return [question_file(c) for c in SINGLE_TURN_CATEGORIES]


def single_turn_documents() -> Iterator[tuple[str, dict[str, Any]]]:
    """(task id, document) for every task of the single-turn categories."""
    version = package_version()
    for category, source in zip(SINGLE_TURN_CATEGORIES, single_turn_inputs()):
        for entry in source.entries():
            task_id = entry["id"]
            yield task_id, from_bfcl(
                entry["function"],
                title=task_id,
                description=f"The functions offered in BFCL task {task_id} ({category}).",
                version=version,
                info_extensions={"x-gecko-source": _source(category=category, task_id=task_id)},
                validate=False,
                language=call_language(category),
            )


WEB_SEARCH_CLASS = "WebSearchAPI"
"""The web_search categories' tool class (agentic): its toolkit sits beside the multi-turn ones."""
WEB_SEARCH_SCENARIO: dict[str, Any] = {"show_snippet": True}
"""Its `_load_scenario` needs `show_snippet` (web_search_base shows snippets; no_snippet loads False)."""
SEARCH_RESULTS: dict[str, Any] = {
    "type": "array",
    "description": "The search results (`body` only when snippets are shown).",
    "items": {"type": "object", "required": ["title", "href"], "properties": {
        "title": {"type": "string", "description": "The title of the search result."},
        "href": {"type": "string", "description": "The URL of the search result."},
        "body": {"type": "string", "description": "A brief description or snippet from the search result."}}},
}
"""`search_engine_query`'s result, as its docstring in bfcl-eval's `web_search.py` states it (its function doc declares
none)."""


def multi_turn_inputs() -> list[SourceFile]:
    """The data files the multi-turn toolkits are built from (the classes' code is hashed separately)."""
    return [func_doc_file(c) for c in (*MULTI_TURN_CLASSES, WEB_SEARCH_CLASS)] + [
        question_file(MULTI_TURN_CATEGORY), answer_file(MULTI_TURN_CATEGORY),
    ]


def _with_error_branch(tool: ToolSpec) -> ToolSpec:
    if tool.response is None:
        return tool
    result = {
        "description": "The documented result, or an error object.",
        "anyOf": [tool.response, ERROR_RESULT],
    }
    return replace(tool, response=result)


def multi_turn_documents() -> Iterator[tuple[str, dict[str, Any]]]:
    """(class name, document) for each of the eight multi-turn tool classes, then the web search class."""
    version = package_version()
    tasks = list(multi_turn_tasks())
    for class_name in MULTI_TURN_CLASSES:
        docs = func_doc_file(class_name).entries()
        tools = [_with_error_branch(t) for t in bfcl_tools(docs, derive_access(class_name, docs, tasks))]
        description = str(getattr(new_instance(class_name, {}), "_api_description", ""))
        yield class_name, toolkit_document(
            tools,
            title=class_name,
            description=description,
            version=version,
            info_extensions={
                "x-gecko-default-state": default_state(class_name),
                "x-gecko-source": _source(tool_class=class_name),
            },
            validate=False,
        )
    yield WEB_SEARCH_CLASS, web_search_document(version)


def web_search_document(version: str) -> dict[str, Any]:
    """The WebSearchAPI toolkit: both tools read (a search and a page fetch change nothing), its state after
    loading the snippet-showing scenario."""
    docs = func_doc_file(WEB_SEARCH_CLASS).entries()
    tools = [_with_error_branch(replace(t, response=SEARCH_RESULTS) if t.response is None else t)
             for t in bfcl_tools(docs, {str(doc["name"]): "read" for doc in docs})]
    instance = new_instance(WEB_SEARCH_CLASS, WEB_SEARCH_SCENARIO)
    return toolkit_document(
        tools,
        title=WEB_SEARCH_CLASS,
        description=str(getattr(instance, "_api_description", "")),
        version=version,
        info_extensions={
            "x-gecko-default-state": instance_state(instance),
            "x-gecko-source": _source(tool_class=WEB_SEARCH_CLASS),
        },
        validate=False,
    )
