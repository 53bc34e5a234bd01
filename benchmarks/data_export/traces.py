"""Parsing the runner's trace records (`benchmarks/runner/README.md`, run directory) into `Attempt`s, and the
tools of toolkit files as the agent was offered them.

The tools are rebuilt the way the runners build them: each OpenAPI toolkit compiled by Gecko's own loader,
described as `GET /toolkits/{name}` describes it, and named for the model by `inference.tools.ToolCatalog`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchmarks.data_export.model import Attempt, Call
from inference.tools.catalog import ToolCatalog


def parse_call(raw: Mapping[str, Any], index: int) -> Call:
    """One call record (`CallRecord.public()`)."""
    raw_arguments = raw.get("raw_arguments")
    return Call(
        call_id=str(raw.get("id") or f"call_{index}"), step=int(raw.get("step") or 0),
        name=str(raw.get("agent_name") or raw.get("name") or ""), arguments=raw.get("arguments"),
        raw_arguments=raw_arguments if isinstance(raw_arguments, str) else None, ok=bool(raw.get("ok")),
        result=str(raw.get("result") if raw.get("result") is not None else ""),
        errors=tuple(e for e in raw.get("errors") or () if isinstance(e, dict)),
    )


def _success(raw: Mapping[str, Any]) -> bool | None:
    """GATS's status of the attempt (the judge's verdict and the calls: a rejected call fails an attempt the
    rules judge passed); the verdict alone when the status says neither."""
    status = {"success": True, "failed": False}.get(str(raw.get("status")))
    if status is not None:
        return status
    verdict = raw.get("verdict")
    return bool(verdict["success"]) if isinstance(verdict, dict) and isinstance(verdict.get("success"), bool) else None


def parse_attempt(raw: Mapping[str, Any]) -> Attempt:
    """One attempt record (`benchmarks.bfcl.single_turn.attempt_trace` and the turn traces that reuse it)."""
    verdict = raw.get("verdict")
    if isinstance(verdict, dict):
        remaining = verdict.get("remaining")
    elif isinstance(verdict, list):  # the checklist's items (open world): those not met
        remaining = [i.get("description") for i in verdict if isinstance(i, dict) and i.get("status") != "success"]
    else:
        remaining = raw.get("remaining")
    calls = [c for c in raw.get("calls") or () if isinstance(c, dict)]
    feedback = raw.get("feedback")
    final_text = raw.get("final_text", raw.get("answer"))
    return Attempt(
        index=int(raw.get("index") or 0), success=_success(raw),
        calls=tuple(parse_call(c, i) for i, c in enumerate(calls)),
        final_text=final_text if isinstance(final_text, str) else None,
        feedback=feedback if isinstance(feedback, str) else None,
        remaining=tuple(str(r) for r in remaining or ()),
    )


def parse_attempts(raw: Any) -> tuple[Attempt, ...]:
    """Every attempt record of a list (anything else: none)."""
    return tuple(parse_attempt(a) for a in raw if isinstance(a, dict)) if isinstance(raw, list) else ()


@lru_cache(maxsize=4096)
def _toolkit_body(path: Path) -> dict[str, Any]:
    from gecko.toolkits.loader import build_toolkit, parse_document

    toolkit = build_toolkit(path, parse_document(path, path.read_bytes()))
    return {"name": toolkit.name, "tools": [
        {"name": op.operation_id, "original_name": op.original_name, "summary": op.summary,
         "description": op.description, "arguments_schema": op.args_schema, "access": op.access}
        for op in toolkit.operations.values()]}


def toolkit_catalog(paths: Sequence[Path]) -> ToolCatalog:
    """The catalog an agent is offered for these toolkit files (compiled once per process and file).

    Raises:
        FileNotFoundError: A toolkit file is missing.
        gecko.toolkits.loader.ToolkitLoadError: A file is not a toolkit Gecko loads.
    """
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such toolkit (build them with `gecko toolkits`, or give "
                                    "--toolkits-dir the directory the run's Gecko served)")
    return ToolCatalog.from_toolkits([_toolkit_body(path) for path in paths])


def offered_tools(catalog: ToolCatalog, original_names: Iterable[str] | None = None) -> tuple[dict[str, Any], ...]:
    """OpenAI definitions of the catalog's tools (only those with these original names, when given)."""
    allowed = None if original_names is None else set(original_names)
    return tuple(spec.openai_tool() for spec in catalog.specs if allowed is None or spec.original_name in allowed)
