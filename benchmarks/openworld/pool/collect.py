"""One collector per kind of source: each returns the pool's toolkits of that source, one per app.

Every collector goes through Gecko's converters (`gecko.convert`) or reads OpenAPI descriptions as published; none
of them edits a tool's schema.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from importlib.resources import files
from pathlib import Path
from typing import Any

from benchmarks.openworld.pool.npm import install_packages, package_tarball, read_package_files, sha256_file
from benchmarks.openworld.pool.spec import BfclSource, McpSources, OpenApiPackage, Tau2Source

MCP_LIST_TIMEOUT = 90.0
MCP_PARALLEL = 4
QUIET_ENV = {"DO_NOT_TRACK": "1"}
"""Given to every MCP server: listing tools should phone nowhere (servers with telemetry honour it)."""


class SourceError(RuntimeError):
    """A source that cannot be read; the message names it and says what to do."""


@dataclass
class PoolToolkit:
    """One toolkit of the pool: the tools of one app from one source."""

    name: str
    """The toolkit name (its file stem, so its route prefix)."""
    app: str
    source: str
    """`bfcl-single-turn`, `bfcl-multi-turn`, `tau2`, `openapi` or `mcp`."""
    origin: str
    """The pinned package (`name@version`) and, where there is one, the file inside it."""
    doc: dict[str, Any]
    fingerprints: dict[str, str] = field(default_factory=dict)
    """Original tool name → `function_fingerprint` of its definition, for function-style sources."""
    refused: dict[str, str] = field(default_factory=dict)
    """Tools the converter refused (name → why): left out of the pool, listed in the manifest."""


def slug(text: str) -> str:
    """Lower-case, `[a-z0-9-]` only (`EventSettingsApi` → `eventsettingsapi`, `Movies_3` → `movies-3`)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "tools"


def function_fingerprint(function: dict[str, Any]) -> str:
    """Identity of a function definition: its name and parameters (descriptions of the function itself aside)."""
    canonical = json.dumps({"name": function.get("name"), "parameters": function.get("parameters")},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:20]


def _installed(package: str, version: str) -> None:
    try:
        found = metadata.version(package)
    except metadata.PackageNotFoundError:
        raise SourceError(f"{package} is not installed: the pool pins {package}=={version} (run `make setup`)") from None
    if found != version:
        raise SourceError(f"{package} {found} is installed but the pool pins {version}: install the pinned version "
                          f"(`make setup`) or change the pin in the sources file")


BFCL_APP_PATTERNS = (re.compile(r"^([^.]+)\.."), re.compile(r"^([A-Za-z]+)_\d+_"))
"""A BFCL function's app: its dotted namespace (`math.factorial` → math) or its SGD service (`Hotels_2_Book` → hotels)."""
BFCL_CATCH_ALL_APP = "bfcl"


def bfcl_app(name: str) -> str:
    """The app of a BFCL function name; un-namespaced functions share the catch-all app `bfcl`."""
    for pattern in BFCL_APP_PATTERNS:
        match = pattern.match(name)
        if match:
            return slug(match.group(1))
    return BFCL_CATCH_ALL_APP


def bfcl_single_turn_functions(spec: BfclSource) -> list[dict[str, Any]]:
    """Every distinct function of the configured single-turn categories, in file order (first definition kept)."""
    from benchmarks.bfcl.loader import load_category

    _installed(spec.package, spec.version)
    distinct: dict[str, dict[str, Any]] = {}
    for category in spec.single_turn_categories:
        for task in load_category(category):
            for function in task.functions:
                distinct.setdefault(function_fingerprint(function), function)
    return list(distinct.values())


def _variants(functions: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Split functions so no group holds one name twice: distinct definitions of a name go to later groups."""
    groups: list[list[dict[str, Any]]] = []
    names: list[set[str]] = []
    for function in functions:
        index = next((i for i, taken in enumerate(names) if function["name"] not in taken), len(groups))
        if index == len(groups):
            groups.append([])
            names.append(set())
        groups[index].append(function)
        names[index].add(function["name"])
    return groups


def bfcl_single_turn(spec: BfclSource) -> list[PoolToolkit]:
    """The single-turn functions grouped by app; a name defined differently by several tasks gets one toolkit per
    definition (`bfcl-<app>`, `bfcl-<app>-v2`, …), so every distinct function is in the pool under its own name."""
    from gecko.convert import from_bfcl

    by_app: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for function in bfcl_single_turn_functions(spec):
        by_app[bfcl_app(function["name"])].append(function)
    toolkits = []
    origin = f"{spec.package}=={spec.version}"
    for app in sorted(by_app):
        for index, group in enumerate(_variants(by_app[app]), start=1):
            base = "bfcl" if app == BFCL_CATCH_ALL_APP else f"bfcl-{app}"
            name = base if index == 1 else f"{base}-v{index}"
            doc = from_bfcl(group, title=f"BFCL {app}" + (f" (variant {index})" if index > 1 else ""),
                            description=f"Functions of the BFCL single-turn data ({origin}), app '{app}'.",
                            validate=False)
            toolkits.append(PoolToolkit(name, app, "bfcl-single-turn", origin, doc,
                                        {f["name"]: function_fingerprint(f) for f in group}))
    return toolkits


def _built_toolkits(directory: Path, what: str) -> list[Path]:
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise SourceError(f"{what}: no toolkits in {directory}; build them first with `gecko toolkits` (`make toolkits`)")
    return paths


def bfcl_multi_turn(spec: BfclSource, data_dir: Path) -> list[PoolToolkit]:
    """The eight multi-turn tool classes, as `gecko toolkits` converted them (one app each)."""
    _installed(spec.package, spec.version)
    origin = f"{spec.package}=={spec.version}"
    return [PoolToolkit(f"bfcl-mt-{slug(path.stem)}", slug(path.stem), "bfcl-multi-turn", origin,
                        json.loads(path.read_bytes()))
            for path in _built_toolkits(data_dir / spec.multi_turn_dir, "BFCL multi-turn")]


def tau2(spec: Tau2Source) -> list[PoolToolkit]:
    """The tau2 domain tools, as the shipped mock toolkits have them (one app per domain)."""
    _installed(spec.package, spec.version)
    origin = f"{spec.package}=={spec.version}"
    shipped = Path(str(files("benchmarks").joinpath("taubench", spec.dir)))  # without importing benchmarks.taubench
    return [PoolToolkit(f"tau2-{slug(path.stem)}", f"tau2-{slug(path.stem)}", "tau2", origin,
                        json.loads(path.read_bytes()))
            for path in _built_toolkits(shipped, "tau2")]


def openapi_package(spec: OpenApiPackage, cache: Path) -> tuple[list[PoolToolkit], dict[str, str]]:
    """The OpenAPI descriptions a pinned npm package ships, as published; also the tarball's sha256."""
    tarball = package_tarball(spec.package, spec.version, cache)
    files = read_package_files(tarball, sorted(set(spec.apps.values())))
    toolkits = []
    for app, inner in sorted(spec.apps.items()):
        try:
            doc = json.loads(files[inner])
        except json.JSONDecodeError as exc:
            raise SourceError(f"{spec.package}@{spec.version}/{inner}: not valid JSON: {exc}") from None
        toolkits.append(PoolToolkit(slug(app), slug(app), "openapi", f"{spec.package}@{spec.version}/{inner}", doc))
    return toolkits, {f"{spec.package}@{spec.version}": sha256_file(tarball)}


def mcp_servers(spec: McpSources, cache: Path) -> list[PoolToolkit]:
    """Each pinned MCP server, installed from npm, started over stdio and asked for its tools.

    Raises:
        SourceError: a server did not start or answer (the message names it).
    """
    if not spec.servers:
        return []
    from gecko.convert import ConversionError

    bin_dir = install_packages([f"{s.package}@{s.version}" for s in spec.servers], cache)
    with tempfile.TemporaryDirectory(prefix="gecko-pool-mcp-") as workdir:
        try:
            listed = asyncio.run(_list_all(spec, bin_dir, workdir))
        except ConversionError as exc:
            raise SourceError(str(exc)) from None
    return listed


def _convertible(tools: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The tools the MCP converter accepts, and why it refuses the others (a server is kept without them)."""
    from gecko.convert import ConversionError, from_mcp

    kept, refused = [], {}
    for tool in tools:
        try:
            from_mcp({"tools": [tool]}, title="probe", validate=False)
        except ConversionError as exc:
            refused[str(tool.get("name"))] = str(exc)
            continue
        kept.append(tool)
    return kept, refused


async def _list_all(spec: McpSources, bin_dir: Path, workdir: str) -> list[PoolToolkit]:
    from gecko.convert import from_mcp
    from gecko.convert.mcp_server import list_server_tools

    gate = asyncio.Semaphore(MCP_PARALLEL)

    async def one(server: Any) -> PoolToolkit:
        argv = [str(bin_dir / server.bin), *(a.replace("{workdir}", workdir) for a in server.args)]
        async with gate:
            listed = await list_server_tools(argv, timeout=MCP_LIST_TIMEOUT, env={**QUIET_ENV, **server.env}, cwd=workdir)
        origin = f"{server.package}@{server.version}"
        tools, refused = _convertible(listed.tools)
        doc = from_mcp({"tools": tools}, title=listed.name or server.app,
                       description=(listed.instructions or f"Tools of the MCP server {origin}.")[:2000],
                       version=listed.version or server.version, validate=False)
        fingerprints = {t["name"]: function_fingerprint({"name": t["name"], "parameters": t.get("inputSchema")})
                        for t in tools}
        return PoolToolkit(f"mcp-{slug(server.app)}", slug(server.app), "mcp", origin, doc, fingerprints, refused)

    return list(await asyncio.gather(*(one(s) for s in spec.servers)))
