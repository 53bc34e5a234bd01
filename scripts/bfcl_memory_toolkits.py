"""The BFCL memory classes as Gecko toolkits (`data/bfcl/openapi/memory/<ClassName>.json`), for the GATS rehearsals
of `gecko bfcl-memory`.

Each class's function docs with the docs' `response` block as the success result plus the error object the memory
classes return on failure (`{"error": "…"}`), `x-gecko-access` by observation (`memory_access`: a method that changed
the memory in a probe is a write), and the empty memory as `info.x-gecko-default-state`
(`benchmarks.bfcl.memory.memory_state`; the vector stores' exported form for `MemoryAPI_vector`, whose class is
imported with FAISS and Gecko's sentence-transformers stand-in: `benchmarks.bfcl.sentence_standin`).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from bfcl_source import SourceFile, func_doc_file, multi_turn_class, package_version
from bfcl_toolkits import ERROR_RESULT

from benchmarks.bfcl.memory import memory_state
from gecko.convert import ToolSpec, toolkit_document
from gecko.convert.bfcl import bfcl_tools

MEMORY_TOOLKIT_CLASSES: tuple[str, ...] = ("MemoryAPI_kv", "MemoryAPI_vector", "MemoryAPI_rec_sum")
PROBE_VALUES: dict[str, Any] = {"key": "probe_key", "value": "changed value", "text": "changed text",
                                "old_text": "probe", "new_text": "changed", "query": "probe", "k": 1, "vec_id": 0}
"""Arguments of the access probes: every value differs from what `_filled` stored."""


def _instance(class_name: str, filled: bool) -> object:
    instance = multi_turn_class(class_name)()
    if filled:
        vector = class_name == "MemoryAPI_vector"  # its stores take a text and give it an id (0 here)
        for name in ("core_memory_add", "archival_memory_add"):
            if hasattr(instance, name):
                getattr(instance, name)(**({"text": "probe value"} if vector else
                                           {"key": "probe_key", "value": "probe value"}))
        if hasattr(instance, "memory_append"):
            instance.memory_append(text="probe text")
    return instance


def memory_access(class_name: str, docs: Sequence[Mapping[str, Any]]) -> dict[str, Literal["read", "write"]]:
    """Each method's kind, observed: called with probe arguments on an empty and on a filled memory, a write changed
    one of them."""
    kinds: dict[str, Literal["read", "write"]] = {}
    for doc in docs:
        arguments = {name: PROBE_VALUES[name] for name in doc["parameters"].get("required", [])}
        changed = False
        for filled in (False, True):
            instance = _instance(class_name, filled)
            before = copy.deepcopy(memory_state(instance))
            try:
                getattr(instance, str(doc["name"]))(**arguments)
            except ZeroDivisionError:  # the key searches fail on an empty memory (rank-bm25 on no documents)
                pass
            changed = changed or memory_state(instance) != before
        kinds[str(doc["name"])] = "write" if changed else "read"
    return kinds


def memory_inputs() -> list[SourceFile]:
    """The function-doc files the memory toolkits are built from."""
    return [func_doc_file(name) for name in MEMORY_TOOLKIT_CLASSES]


def _with_error_branch(tool: ToolSpec) -> ToolSpec:
    if tool.response is None:
        return tool
    return ToolSpec(**{**tool.__dict__, "response": {"description": "The documented result, or an error object.",
                                                     "anyOf": [tool.response, ERROR_RESULT]}})


def memory_documents() -> Iterator[tuple[str, dict[str, Any]]]:
    """(class name, document) for each memory class that imports here (`MemoryAPI_vector` needs FAISS and the
    embedding model: without them it has no toolkit, and its tasks are untested)."""
    version = package_version()
    for class_name, source in zip(MEMORY_TOOLKIT_CLASSES, memory_inputs()):
        try:
            multi_turn_class(class_name)
        except ImportError as exc:
            print(f"bfcl-memory: no toolkit for {class_name}: {exc}", file=sys.stderr)
            continue
        docs = source.entries()
        tools = [_with_error_branch(t) for t in bfcl_tools(docs, memory_access(class_name, docs))]
        instance = multi_turn_class(class_name)()
        yield class_name, toolkit_document(
            tools, title=class_name, description=str(getattr(instance, "_api_description", "")), version=version,
            info_extensions={"x-gecko-default-state": memory_state(instance),
                             "x-gecko-source": {"benchmark": "bfcl", "package": "bfcl-eval",
                                                "package_version": version, "tool_class": class_name}},
            validate=False)
