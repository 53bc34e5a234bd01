"""How a stage's LLM request is tagged for the local stub: the role header, the schema name, data sections.

The client sends the usage role of every request in the `X-Gecko-Role` header (`ROLE_HEADER`); the
stub reads it to decide what kind of reply to fabricate. A structured request names its schema
`gecko_<role>` (`schema_name`), which identifies the stage to a stub reached without the header.
Prompt data goes in tagged sections (`section`) so that the stub can read the arguments, state or
schema without parsing prose. Real models see plainly delimited data and nothing stub-specific.
"""

from __future__ import annotations

import json
import re
from typing import Any

from utils.roles import SERVER_ROLES

ROLE_HEADER = "X-Gecko-Role"
"""Request header carrying the usage role of an LLM call (`utils.roles.CALL_ROLES`)."""
STAGES: tuple[str, ...] = tuple(call.name for role in SERVER_ROLES for call in role.calls)
"""The usage roles of the server stages: what the stub fabricates structured replies for."""
_SCHEMA_PREFIX = "gecko_"

SCHEMA_SECTION = "json_schema"
"""Section holding the output schema when a model has no JSON-schema response format."""


def schema_name(role: str) -> str:
    """`response_format` schema name of a stage's reply (`gecko_state`)."""
    return _SCHEMA_PREFIX + role


def stage_of_schema_name(name: str) -> str | None:
    """The stage (usage role) whose `schema_name` is `name`, or None."""
    stage = name[len(_SCHEMA_PREFIX):] if name.startswith(_SCHEMA_PREFIX) else ""
    return stage if stage in STAGES else None


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
