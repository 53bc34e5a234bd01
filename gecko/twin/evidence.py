"""Evidence in captured calls, gathered in call order: which values results issued, which arguments sent them back,
and how a tool reports its own errors (`gecko.twin.learn` writes it into a toolkit)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gecko.twin.capture import Capture
from gecko.twin.outcome import ERROR_STATUSES

MAX_ID_CHARS = 80
ID_NAME = re.compile(r"(^id$|_id$|Id$|ID$|_ids$|Ids$)")
NAME_KEY = re.compile(r"(^|_)(id|name|key)s?$|(Id|Name|Key)s?$|^names?$")
"""Argument fields whose values a client chooses and later calls send back (`entities[].name` → `entityName`)."""
FRESH_SHARE = 0.8
"""An id-named result field whose value is new in at least this share of results issues ids without a later use."""


@dataclass
class ToolFacts:
    """What the captures show about one tool."""

    calls: list[Capture] = field(default_factory=list)
    fresh: Counter[str] = field(default_factory=Counter)
    """Result path → how many results had a value there never seen before."""
    results_at: Counter[str] = field(default_factory=Counter)
    """Result path → how many results had a scalar there."""
    reused: set[str] = field(default_factory=set)
    """Result paths whose fresh values a later call sent back."""
    id_arguments: dict[str, str] = field(default_factory=dict)
    """Argument path → the `tool.path` that issued the values it was sent."""
    echoes_id: int = 0
    """Successful results that repeat the value of one of its id arguments."""
    accepts_unknown: set[str] = field(default_factory=set)
    """Top-level arguments that succeeded with a value no result had issued (the server does not check them)."""


def scalars(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every id-like scalar (string or integer) in `value`; list positions are `[]`."""
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from scalars(sub, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for sub in value:
            yield from scalars(sub, f"{path}[]")
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int) or (isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS and " " not in value):
        yield path, value


def _key(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


def _last(path: str) -> str:
    parts = [p for p in re.split(r"[.\[\]]+", path) if p]
    return parts[-1] if parts else ""


def _names_an_id(argument: str, result: str) -> bool:
    """An argument sending back a value a result issued carries that id when it is named like an id or like the
    result's field (a count of 3 sent back as a `limit` of 3 is no id)."""
    name = _last(argument)
    return bool(ID_NAME.search(name) or NAME_KEY.search(name)) or name == _last(result)


def gather_facts(captures: Sequence[Capture]) -> dict[str, ToolFacts]:
    """One pass over the captures in call order: fresh values, their reuse, and id arguments."""
    facts: dict[str, ToolFacts] = {}
    seen: set[str] = set()
    issued: dict[str, tuple[str, str]] = {}
    named: dict[str, tuple[str, str]] = {}
    for capture in captures:
        tool = facts.setdefault(capture.tool, ToolFacts())
        tool.calls.append(capture)
        arguments = list(scalars(capture.arguments))
        for path, value in arguments:
            source = issued.get(_key(value))
            if source is not None and _names_an_id(path, source[1]):
                tool.id_arguments.setdefault(path, f"{source[0]}.{source[1]}")
                facts[source[0]].reused.add(source[1])
            elif (introduced := named.get(_key(value))) is not None and introduced[0] != capture.tool:
                tool.id_arguments.setdefault(path, f"{introduced[0]}({introduced[1]})")
        if capture.outcome == "ok":
            tool.accepts_unknown.update(p for p, v in arguments if "." not in p and "[" not in p
                                        and _key(v) not in issued)
            for path, value in arguments:
                if NAME_KEY.search(re.split(r"[.\[\]]+", path.strip("[]."))[-1]):
                    named.setdefault(_key(value), (capture.tool, path))
            sent = {_key(v) for _, v in arguments}
            result_values = list(scalars(capture.result))
            returned = {_key(v) for _, v in result_values}
            if any(_key(v) in returned for p, v in arguments if p in tool.id_arguments):
                tool.echoes_id += 1
            for path, value in result_values:
                tool.results_at[path] += 1
                key = _key(value)
                if key not in seen and key not in sent:
                    tool.fresh[path] += 1
                    issued.setdefault(key, (capture.tool, path))
            seen.update(_key(v) for _, v in result_values)
        seen.update(_key(v) for _, v in arguments)
    return facts


def issuing_paths(tool: ToolFacts) -> list[str]:
    """Result paths that carry new ids: fresh values sent back later, or an id-named field fresh in most results."""
    out = []
    for path, count in tool.fresh.items():
        name = re.split(r"[.\[\]]+", path.strip("[]."))[-1] if path else ""
        if path in tool.reused or (ID_NAME.search(name) and count >= FRESH_SHARE * tool.results_at[path]):
            out.append(path)
    return sorted(out)


def _template(capture: Capture) -> tuple[str, str] | None:
    """(message with the id replaced by `{id}`, argument path) when the error text names an argument's value."""
    text = capture.text or (capture.result if isinstance(capture.result, str) else "")
    if isinstance(capture.result, Mapping):
        message = capture.result.get("error") or capture.result.get("message")
        text = message if isinstance(message, str) else text
    candidates = sorted(((p, str(v)) for p, v in scalars(capture.arguments) if len(str(v)) >= 2),
                        key=lambda pv: -len(pv[1]))
    for path, value in candidates:
        if value in text:
            return text.replace(value, "{id}"), path
    return None


def error_convention(calls: Sequence[Capture]) -> dict[str, Any] | None:
    """How a tool reports its own errors, from its `error` captures (None without any)."""
    errors = [c for c in calls if c.outcome == "error"]
    if not errors:
        return None
    flagged = [c for c in errors if c.is_error]
    convention: dict[str, Any]
    if len(flagged) * 2 >= len(errors):
        convention = {"kind": "isError"}
    else:
        bodies = [c.result for c in errors if isinstance(c.result, Mapping)]
        keys = Counter(tuple(sorted(b)) for b in bodies)
        shape = list(keys.most_common(1)[0][0]) if keys else ["error"]
        convention = {"kind": "body", "fields": shape}
        status = next((b.get("status") for b in bodies if str(b.get("status", "")).lower() in ERROR_STATUSES), None)
        if status is not None:
            convention["status"] = status
    templates = Counter(t for c in errors if (t := _template(c)) is not None)
    if templates:
        (message, argument), _ = templates.most_common(1)[0]
        convention.update(not_found=message, id_argument=argument)
    convention["examples"] = [c.text or str(c.result) for c in errors[:2]]
    return convention


__all__ = ["ToolFacts", "error_convention", "gather_facts", "issuing_paths", "scalars"]
