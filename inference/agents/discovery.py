"""Tool discovery for open-world agents: searching the pool, and the growing set of tools an agent knows.

```
ToolSearch.search(query, k) ──► [ToolSearchHit]          (Gecko's GET /tools/search, or a fake in tests)
Discovery.add(hits, catalog) ──► newly known CatalogTools (only tools the run's executor can call)
Discovery.offered()          ──► OpenAI definitions of the known tools, in the order found
```

The executor's catalog may hold the whole pool; what an agent is shown is only what it found. A `Discovery` lives
as long as its agent (one task), so a GATS retry starts with the tools the previous attempt found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError, GeckoUnavailableError
from inference.gecko.models import ToolSearchHit
from inference.tools.catalog import CatalogTool, ToolCatalog
from utils.faults.effects import NOTICE_KEY

DEFAULT_SEARCH_K = 8
SEARCH_TOOL_NAME = "search_tools"
"""The function the LLM agents are offered to search the pool mid-task (answered by the agent, not by a toolkit)."""
MAX_QUERY_CHARS = 2000


class ToolSearchError(Exception):
    """The search service failed (the run is untested, not the agent's failure)."""


class ToolSearch(Protocol):
    """Something that finds tools by what they do."""

    async def search(self, query: str, k: int) -> list[ToolSearchHit]:
        """The best `k` tools for `query`, best first.

        Raises:
            ToolSearchError: The service failed.
        """
        ...


class GeckoToolSearch:
    """`ToolSearch` over Gecko's `GET /tools/search`.

    Args:
        client: The run's Gecko client.
    """

    def __init__(self, client: GeckoClient) -> None:
        self.client = client

    async def search(self, query: str, k: int) -> list[ToolSearchHit]:
        """Search the pool; a refused query (empty after stop words) finds nothing."""
        text = " ".join(query.split())[:MAX_QUERY_CHARS]
        if not text:
            return []
        try:
            return (await self.client.search_tools(text, k)).hits
        except GeckoUnavailableError as exc:
            raise ToolSearchError(f"tool search failed: {exc}") from exc
        except GeckoError:
            return []


@dataclass(frozen=True)
class SearchRecord:
    """One search an agent made."""

    query: str
    found: tuple[str, ...]
    """`toolkit/name` of every hit, best first."""

    def public(self) -> dict[str, Any]:
        """JSON form for traces."""
        return {"query": self.query, "found": list(self.found)}


def search_tool_definition() -> dict[str, Any]:
    """The OpenAI definition of `search_tools`."""
    return {"type": "function", "function": {
        "name": SEARCH_TOOL_NAME,
        "description": "Search the tool pool for tools by what they do. Found tools become callable at once.",
        "parameters": {"type": "object", "required": ["query"], "properties": {
            "query": {"type": "string", "description": "what the tool should do, in a few words"},
            "k": {"type": "integer", "minimum": 1, "maximum": 20, "description": "how many tools (default 8)"},
        }},
    }}


@dataclass
class Discovery:
    """The tools an agent has found so far, and the searches it made."""

    known: dict[tuple[str, str], CatalogTool] = field(default_factory=dict)
    """(toolkit, operationId) → the executor's tool, in the order found."""
    searches: list[SearchRecord] = field(default_factory=list)

    def add(self, query: str, hits: Sequence[ToolSearchHit], catalog: ToolCatalog) -> list[CatalogTool]:
        """Record a search; return the tools it made newly known (hits the executor cannot call are skipped)."""
        index = _catalog_index(catalog)
        self.searches.append(SearchRecord(query, tuple(f"{h.toolkit}/{h.name}" for h in hits)))
        new = []
        for hit in hits:
            spec = index.get((hit.toolkit, hit.name))
            if spec is not None and (hit.toolkit, hit.name) not in self.known:
                self.known[(hit.toolkit, hit.name)] = spec
                new.append(spec)
        return new

    def find(self, toolkit: str, name: str) -> CatalogTool | None:
        """The known tool `toolkit/name`, or None when it was not found yet."""
        return self.known.get((toolkit, name))

    def offered(self) -> list[dict[str, Any]]:
        """OpenAI definitions of every known tool."""
        return [spec.openai_tool() for spec in self.known.values()]

    @property
    def toolkits(self) -> list[str]:
        """Toolkits of the known tools, in the order found."""
        return list(dict.fromkeys(toolkit for toolkit, _ in self.known))

    def public(self) -> dict[str, Any]:
        """JSON form for traces."""
        return {"searches": [s.public() for s in self.searches],
                "known": [f"{toolkit}/{name}" for toolkit, name in self.known]}


def _catalog_index(catalog: ToolCatalog) -> dict[tuple[str, str], CatalogTool]:
    return {(spec.toolkit, spec.operation_id): spec for spec in catalog.specs}


def search_results_text(hits: Sequence[ToolSearchHit], discovery: Discovery) -> str:
    """What the model reads after `search_tools`: the found tools by the names it can call them by."""
    lines = []
    for hit in hits:
        spec = discovery.find(hit.toolkit, hit.name)
        name = spec.agent_name if spec is not None else f"{hit.toolkit}/{hit.name} (not callable in this run)"
        lines.append(f"- {name} ({hit.app}, {hit.access}): {hit.summary}")
    return "Found tools (now callable):\n" + "\n".join(lines) if lines else "No tool matches that query."


def notice_of(body: Any) -> str | None:
    """The constraint notice a tool result carries (the state controller's `_notice`), or None."""
    if isinstance(body, Mapping) and isinstance(body.get(NOTICE_KEY), str):
        return str(body[NOTICE_KEY])
    return None
