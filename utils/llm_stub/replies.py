"""What the stub answers for each Gecko stage: deterministic values that fit the requested schema.

Each stage (named by its usage role) has an intended reply built from the prompt's tagged sections
(see `utils.llm.stage_tags`). If the intended value does not fit the schema the client asked for, the
stub falls back to a generated instance of that schema, so it keeps working when a prompt's output
model changes. Tokens that steer the stub from test data:

- `stub-reject` anywhere in the arguments: the semantic check answers invalid;
- `stub-fail` / `stub-unknown` in a checklist item: the judge marks that item failed / unknown.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from utils.llm import stage_tags as tags
from utils.roles import BOOTSTRAP, CHECKLIST, JUDGE, STATE, VALIDATOR
from utils.schema.instance import UnsatisfiableSchema, generate_instance, is_valid

REJECT_TOKEN = "stub-reject"
FAIL_TOKEN = "stub-fail"
UNKNOWN_TOKEN = "stub-unknown"
MAX_CHECKLIST_ITEMS = 6


def _semantic(text: str) -> dict[str, Any]:
    arguments = tags.read_section(text, tags.SECTION_ARGUMENTS) or ""
    if REJECT_TOKEN in arguments:
        return {"valid": False, "errors": [f"stub: the arguments contain '{REJECT_TOKEN}'"]}
    return {"valid": True, "errors": []}


def _state_patch(text: str) -> dict[str, Any]:
    state = tags.read_json_section(text, tags.SECTION_STATE)
    call = tags.read_json_section(text, tags.SECTION_CALL) or {}
    entry = {"tool": call.get("tool", ""), "arguments": call.get("arguments", {})}
    patch: list[dict[str, Any]]
    if isinstance(state, dict) and isinstance(state.get("stub_writes"), list):
        patch = [{"op": "add", "path": "/stub_writes/-", "value": entry}]
    else:
        patch = [{"op": "add", "path": "/stub_writes", "value": [entry]}]
    return {"patch": patch, "reasoning": "stub: append the call to /stub_writes"}


def _bootstrap(text: str) -> dict[str, Any]:
    state = tags.read_json_section(text, tags.SECTION_STATE)
    if isinstance(state, dict) and "stub_bootstrap" in state:
        return {"patch": [], "reasoning": "stub: already bootstrapped"}
    return {"patch": [{"op": "add", "path": "/stub_bootstrap", "value": True}], "reasoning": "stub: mark bootstrap"}


def _checklist(text: str) -> dict[str, Any]:
    task = tags.read_section(text, tags.SECTION_TASK) or ""
    try:
        task = json.loads(task) if task.startswith('"') else task
    except ValueError:
        pass
    parts = [p.strip(" .;,") for p in re.split(r"[.;\n]|\band then\b|\bthen\b|\band\b", str(task))]
    parts = [p for p in parts if p][:MAX_CHECKLIST_ITEMS] or ["complete the task"]
    return {"items": [{"description": part[0].upper() + part[1:]} for part in parts]}


def _judge(text: str) -> dict[str, Any]:
    checklist = tags.read_json_section(text, tags.SECTION_CHECKLIST) or []
    items = []
    for index, item in enumerate(checklist if isinstance(checklist, list) else []):
        item = item if isinstance(item, dict) else {"description": str(item)}
        description = str(item.get("description", ""))
        status = "failed" if FAIL_TOKEN in description else "unknown" if UNKNOWN_TOKEN in description else "success"
        items.append({"id": str(item.get("id", f"c{index + 1}")), "status": status,
                      "reasoning": f"stub: item judged {status}"})
    return {"items": items}


_BUILDERS = {
    VALIDATOR.name: _semantic,
    STATE.name: _state_patch,
    BOOTSTRAP.name: _bootstrap,
    CHECKLIST.name: _checklist,
    JUDGE.name: _judge,
}
"""Stages with an intended reply; the others (the responder) get an instance of the requested schema."""


def seed_of(text: str) -> str:
    """Seed for generated values: a digest of the prompt text."""
    return hashlib.sha256(text.encode()).hexdigest()


def structured_value(stage: str | None, text: str, seed_text: str, schema: Any) -> Any:
    """The JSON value the stub returns for a structured request of `stage`.

    Args:
        stage: detected stage (None when unknown).
        text: all message text of the request (sections are read from it).
        seed_text: text whose digest seeds generated values (the first user message).
        schema: the requested output schema, if any.
    """
    builder = _BUILDERS.get(stage or "")
    intended = builder(text) if builder else None
    if intended is not None and (schema is None or is_valid(schema, intended)):
        return intended
    if schema is None:
        return intended if intended is not None else {"reply": "stub"}
    hints = tags.read_json_section(text, tags.SECTION_ARGUMENTS)
    try:
        return generate_instance(schema, seed_of(seed_text), hints if isinstance(hints, dict) else None)
    except UnsatisfiableSchema:
        return {}


def malformed_text(value: Any) -> str:
    """JSON text of `value` cut short so that it does not parse."""
    full = json.dumps(value)
    cut = max(1, len(full) // 2)
    return full[:cut] if full[:cut] != full else full + "{"


def violating_value(schema: Any, seed_text: str) -> Any:
    """A JSON value that violates `schema` (for the schema-violation fault)."""
    schema = schema if schema is not None else {"type": "object", "required": ["_"]}
    candidates: list[Any] = []
    required = schema.get("required") if isinstance(schema, dict) else None
    if required:
        try:
            value = generate_instance(schema, seed_of(seed_text))
        except UnsatisfiableSchema:
            value = None
        if isinstance(value, dict):
            value.pop(required[0], None)
            candidates.append(value)
    candidates += [{"unexpected": True}, [], "not valid", 12345, None]
    return next((c for c in candidates if not is_valid(schema, c)), {"$invalid": [None]})
