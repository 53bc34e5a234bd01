"""Markers that name a Gecko stage inside its prompt, shared by the prompts and the local stub.

Each stage's system prompt starts with `marker(stage)`; the stub reads it back with `detect_stage` to
decide what kind of reply to fabricate. Prompt data goes in tagged sections (`section`) so that the
stub can read the arguments, state or schema without parsing prose. Real models see a harmless
first line and plainly delimited data.
"""

from __future__ import annotations

import json
import re
from typing import Any

SEMANTIC = "semantic-validation"
RESPONSE = "response-synthesis"
STATE_PATCH = "state-patch"
STATE_BOOTSTRAP = "state-bootstrap"
CHECKLIST = "checklist"
JUDGE = "judge"
PLANNER = "planner"
USER = "user-simulator"
STAGES: tuple[str, ...] = (SEMANTIC, RESPONSE, STATE_PATCH, STATE_BOOTSTRAP, CHECKLIST, JUDGE, PLANNER, USER)

_PREFIX = "gecko-stage: "
_MARKER = re.compile(r"gecko-stage: ([a-z][a-z-]*)")

SCHEMA_SECTION = "json_schema"
"""Section holding the output schema when a model has no JSON-schema response format."""


def marker(stage: str) -> str:
    """The line that opens the system prompt of `stage`."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; known: {', '.join(STAGES)}")
    return _PREFIX + stage


def detect_stage(text: str) -> str | None:
    """The stage named by the first marker in `text`, or None."""
    match = _MARKER.search(text or "")
    return match.group(1) if match and match.group(1) in STAGES else None


def schema_name(stage: str) -> str:
    """`response_format` schema name for `stage` (`gecko_state_patch`); also lets the stub spot the stage."""
    return "gecko_" + stage.replace("-", "_")


def stage_of_schema_name(name: str) -> str | None:
    """Inverse of `schema_name`."""
    for stage in STAGES:
        if schema_name(stage) == name:
            return stage
    return None


def section(name: str, value: Any) -> str:
    """`<name>` … `</name>` around compact JSON (or around text, for strings)."""
    body = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=False,
                                                          separators=(",", ":"), default=str)
    return f"<{name}>\n{body}\n</{name}>"


def read_section(text: str, name: str) -> str | None:
    """Body of the last `<name>` section in `text`, or None."""
    matches = re.findall(rf"<{re.escape(name)}>\n(.*?)\n</{re.escape(name)}>", text or "", re.DOTALL)
    return matches[-1] if matches else None


def read_json_section(text: str, name: str) -> Any:
    """Parsed JSON body of the last `<name>` section; None when absent or not JSON."""
    body = read_section(text, name)
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


SECTION_TOOL = "tool"
"""The operation: name, description, argument schema."""
SECTION_ARGUMENTS = "arguments"
"""The validated arguments of the call."""
SECTION_RESPONSE_SCHEMA = "response_schema"
SECTION_STATE = "state"
"""The current task state document."""
SECTION_RECENT_CALLS = "recent_calls"
SECTION_CALL = "call"
"""A finished call whose effect goes into the state: tool, access, arguments, response."""
SECTION_TOOLKITS = "toolkits"
SECTION_TASK = "task"
SECTION_PREVIOUS_TASKS = "previous_tasks"
SECTION_TOOLS = "tools"
SECTION_CHECKLIST = "checklist"
SECTION_CALLS = "calls"
SECTION_AGENT_RESPONSE = "agent_response"
