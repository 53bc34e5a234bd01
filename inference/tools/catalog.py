"""The tools an agent may call in one task: specs read from Gecko's `GET /toolkits/{name}`, agent-facing
names, and OpenAI function definitions.

A `CatalogTool` is one operation of one toolkit. The catalog gives each a provider-safe agent name (see
`names.py`) and resolves names both ways: the agent's name → the spec (for execution), and the tool's
original name (`x-gecko-original-name`, e.g. BFCL's `math.factorial`) → the spec (for scripted agents
and exports). Argument schemas are passed to the model unchanged, nested schemas included.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from inference.tools.names import assign_agent_names

Access = Literal["read", "write"]


@dataclass(frozen=True)
class CatalogTool:
    """One tool (an OpenAPI operation) as an agent sees it."""

    toolkit: str
    operation_id: str
    original_name: str
    """The tool's own name before it was made safe (`math.factorial`); the operationId if none was given."""
    agent_name: str
    """The provider-safe name the model calls it by."""
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the arguments object (as Gecko validates it)."""
    response_schema: Mapping[str, Any] | None = None
    access: Access = "write"

    def openai_tool(self) -> dict[str, Any]:
        """The OpenAI `tools[]` entry of this tool."""
        parameters = dict(self.parameters) if self.parameters else {"type": "object", "properties": {}}
        return {
            "type": "function",
            "function": {"name": self.agent_name, "description": self.description, "parameters": parameters},
        }


class ToolCatalog:
    """The tools of a task, indexed by agent name and by original name.

    Args:
        specs: The tools; agent names must be unique (use `ToolCatalog.from_toolkits` to assign them).

    Raises:
        ValueError: Two specs share an agent name.
    """

    def __init__(self, specs: Iterable[CatalogTool]) -> None:
        self._specs = tuple(specs)
        self._by_agent: dict[str, CatalogTool] = {}
        self._by_original: dict[str, CatalogTool] = {}
        for spec in self._specs:
            if spec.agent_name in self._by_agent:
                raise ValueError(f"two tools are named {spec.agent_name!r} for the agent")
            self._by_agent[spec.agent_name] = spec
            self._by_original.setdefault(spec.original_name, spec)

    @classmethod
    def from_toolkits(cls, toolkits: Sequence[Mapping[str, Any]]) -> ToolCatalog:
        """Build a catalog from `GET /toolkits/{name}` bodies (each with `name` and `tools`)."""
        raw = [(str(tk["name"]), tool) for tk in toolkits for tool in tk.get("tools", [])]
        names = assign_agent_names((toolkit, str(tool["name"])) for toolkit, tool in raw)
        specs = []
        for toolkit, tool in raw:
            op = str(tool["name"])
            specs.append(CatalogTool(
                toolkit=toolkit,
                operation_id=op,
                original_name=str(tool.get("original_name") or op),
                agent_name=names[(toolkit, op)],
                description=str(tool.get("description") or tool.get("summary") or ""),
                parameters=tool.get("arguments_schema") or {"type": "object", "properties": {}},
                response_schema=tool.get("response_schema"),
                access="read" if tool.get("access") == "read" else "write",
            ))
        return cls(specs)

    @property
    def specs(self) -> tuple[CatalogTool, ...]:
        """All tools, in toolkit order."""
        return self._specs

    @property
    def by_agent_name(self) -> Mapping[str, CatalogTool]:
        """Agent name → spec."""
        return MappingProxyType(self._by_agent)

    def resolve(self, agent_name: str) -> CatalogTool | None:
        """The tool the agent means by `agent_name`, or None for a name that is not in the catalog."""
        return self._by_agent.get(agent_name)

    def by_original_name(self, original_name: str) -> CatalogTool | None:
        """The tool whose original name is `original_name` (first one if several toolkits share it)."""
        return self._by_original.get(original_name)

    def suggestions(self, name: str, limit: int = 3) -> list[str]:
        """Agent names close to `name`, for an "unknown tool" message."""
        return difflib.get_close_matches(name, list(self._by_agent), n=limit, cutoff=0.6)

    def openai_tools(self) -> list[dict[str, Any]]:
        """OpenAI function definitions of every tool."""
        return [spec.openai_tool() for spec in self._specs]

    def __len__(self) -> int:
        return len(self._specs)
