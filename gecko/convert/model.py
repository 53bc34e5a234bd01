"""What every input format is parsed into: tool specs, gathered into a toolkit spec."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Access = Literal["read", "write"]
ResponseOrigin = Literal["source", "inferred", "generic"]
"""Where an operation's 200 schema came from; emitted as `x-gecko-response-origin`."""

ACCESS_KINDS: tuple[Access, ...] = ("read", "write")


class ConversionError(ValueError):
    """The input cannot be turned into a toolkit; the message names the tool and the problem."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool, independent of the format it came from.

    Schemas are JSON Schema 2020-12 and may reference shared definitions as
    `#/components/schemas/<name>` (see `ToolkitSpec.schemas`).
    """

    name: str
    """The tool's original name, kept in `x-gecko-original-name`."""
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    """Object schema of the arguments, as declared by the source."""
    response: dict[str, Any] | None = None
    """Schema of a successful result, or None when the source declares none."""
    response_description: str = ""
    """What the result is, for the 200 response's `description`."""
    response_origin: ResponseOrigin = "source"
    """`source` when the input declared `response`, `inferred` when an LLM proposed it."""
    access: Access | None = None
    """Read/write kind when the source declares it."""
    title: str = ""
    """A short display name (MCP `title`); becomes the operation's `summary`."""
    extensions: dict[str, Any] = field(default_factory=dict)
    """Extra `x-…` keys copied onto the operation."""
    close_arguments: bool = True
    """Refuse arguments the source does not declare (`additionalProperties: false` where the source says nothing).
    False for sources whose schema is a contract of its own (MCP `inputSchema`): kept exactly as declared."""
    provenance: dict[str, str] = field(default_factory=dict)
    """What the converter added or inferred, and from what (`access` → `annotations.readOnlyHint`); emitted, with
    what the document builder adds, as the operation's `x-gecko-provenance`."""


@dataclass(frozen=True)
class ToolkitSpec:
    """A set of tools that becomes one OpenAPI document."""

    title: str
    tools: tuple[ToolSpec, ...]
    description: str = ""
    version: str = "1.0.0"
    schemas: dict[str, Any] = field(default_factory=dict)
    """Shared definitions, emitted as `components/schemas`."""
    info_extensions: dict[str, Any] = field(default_factory=dict)
    """Extra `x-…` keys of `info`, e.g. `x-gecko-default-state`."""
