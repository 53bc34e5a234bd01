"""The agent's tool definitions for tau2 and a tool backend over a live `Environment`.

Definitions come from the mock toolkit document `benchmarks/taubench/toolkits/<domain>.json` (the same
descriptions and argument schemas Gecko serves), with local `$ref`s inlined, limited to the tools of the
task set. The catalog's `toolkit` is the domain name, so the same catalog drives Gecko (`POST
/<domain>/<tool>`) and the real environment.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.taubench.environment import DomainRuntime, Environment
from benchmarks.taubench.mock_toolkits import MOCK_DIR, USER_SUFFIX
from inference.tools import CatalogTool, ToolCatalog, ToolError, ToolOutcome


def _inline(node: Any, document: Mapping[str, Any], depth: int = 0) -> Any:
    if depth > 32:
        raise ValueError("$ref nesting too deep")
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = document
            for part in ref[2:].split("/"):
                target = target[part]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**_inline(target, document, depth + 1), **_inline(rest, document, depth + 1)}
        return {k: _inline(v, document, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, document, depth + 1) for v in node]
    return node


def load_catalog(runtime: DomainRuntime, mock_dir: Path = MOCK_DIR, *, side: str = "assistant") -> ToolCatalog:
    """The domain's tools as the agent sees them (task-set tools only, sorted by name), or with `side="user"` the
    user's own tools of a dual-control domain (toolkit `<domain>_user`).

    Raises:
        FileNotFoundError: the mock toolkit was not built (`python -m benchmarks.taubench.mock_toolkits`).
        KeyError: a tool of the runtime is missing from the document.
    """
    user = side == "user"
    toolkit = runtime.name + USER_SUFFIX if user else runtime.name
    document = json.loads((mock_dir / f"{toolkit}.json").read_text())
    operations = {op["operationId"]: op for item in document["paths"].values() for op in item.values()}
    tools = []
    for name in runtime.user_tool_names() if user else runtime.tool_names():
        op = operations[name]
        schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        write = runtime.is_user_write(name) if user else runtime.is_write(name)
        tools.append({
            "name": name, "description": op.get("description") or op.get("summary") or "",
            "arguments_schema": _inline(schema or {"type": "object", "properties": {}}, document),
            "access": "write" if write else "read",
        })
    return ToolCatalog.from_toolkits([{"name": toolkit, "tools": tools}])


class EnvironmentBackend:
    """`inference.tools.ToolBackend` over one tau2 `Environment` (its tools, its live DB).

    Args:
        environment: the environment the calls mutate (a scratch fork in GATS rollouts).
    """

    def __init__(self, environment: Environment) -> None:
        self.environment = environment

    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        """Execute on the environment; a tool error is an outcome (`tool_error`), never an exception."""
        outcome = self.environment.execute(tool.original_name, arguments)
        await asyncio.sleep(0)  # let other conversations run between calls
        if outcome.error:
            return ToolOutcome(False, outcome.content, body=outcome.content, error_kind="tool_error",
                               errors=(ToolError(outcome.content, source="real"),))
        return ToolOutcome(True, outcome.content, body=outcome.json())
