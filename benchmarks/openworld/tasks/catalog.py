"""The pool as the task engines see it: every tool's tags from `manifest.json`, and its arguments schema from the
toolkit file, loaded with Gecko's own loader on first use (a pool has hundreds of toolkits; a task uses a few)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PoolTool:
    """One pool tool with what an engine needs to call it."""

    toolkit: str
    operation_id: str
    name: str
    app: str
    source: str
    access: str
    summary: str
    args_schema: dict[str, Any]

    @property
    def key(self) -> str:
        """`toolkit/operationId`."""
        return f"{self.toolkit}/{self.operation_id}"

    @property
    def argument_names(self) -> tuple[str, ...]:
        """The top-level argument names the schema declares."""
        props = self.args_schema.get("properties")
        return tuple(props) if isinstance(props, dict) else ()


@dataclass
class PoolCatalog:
    """The tools of one pool directory (`toolkits/` + `manifest.json`), by toolkit and app."""

    root: Path
    entries: list[dict[str, Any]]
    by_toolkit: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _loaded: dict[str, dict[str, PoolTool] | None] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path) -> PoolCatalog:
        """Read `root/manifest.json`; raises FileNotFoundError/ValueError naming what is wrong."""
        manifest_path = root / "manifest.json"
        if not manifest_path.is_file():
            raise FileNotFoundError(f"{manifest_path}: no pool manifest (build one with `gecko pool build`)")
        entries = json.loads(manifest_path.read_text(encoding="utf-8")).get("tools")
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"{manifest_path}: the manifest lists no tools")
        by_toolkit: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for entry in entries:
            by_toolkit[entry["toolkit"]].append(entry)
        return cls(root=root, entries=entries, by_toolkit=dict(sorted(by_toolkit.items())))

    @property
    def toolkit_dir(self) -> Path:
        """What Gecko serves: `root/toolkits`."""
        return self.root / "toolkits"

    def app_of(self, toolkit: str) -> str:
        """The app tag of a toolkit."""
        return str(self.by_toolkit[toolkit][0]["app"])

    def source_of(self, toolkit: str) -> str:
        """The source tag of a toolkit."""
        return str(self.by_toolkit[toolkit][0]["source"])

    def tools(self, toolkit: str) -> dict[str, PoolTool]:
        """The toolkit's tools by operationId (empty when its file no longer loads)."""
        if toolkit not in self._loaded:
            self._loaded[toolkit] = self._load(toolkit)
        return self._loaded[toolkit] or {}

    def _load(self, toolkit: str) -> dict[str, PoolTool] | None:
        from gecko.toolkits.loader import build_toolkit, parse_document

        path = self.toolkit_dir / f"{toolkit}.json"
        try:
            loaded = build_toolkit(path, parse_document(path, path.read_bytes()))
        except (OSError, ValueError, RecursionError):
            return None
        tags = {e["operation_id"]: e for e in self.by_toolkit.get(toolkit, [])}
        tools = {}
        shared = Counter(str(tag.get("summary", "")) for tag in tags.values())
        for op in loaded.operations.values():
            tag = tags.get(op.operation_id, {})
            summary = str(tag.get("summary") or op.summary or "")
            if not summary or shared[summary] > 1:  # a class's description on every method: the name says more
                summary = op.original_name.replace("_", " ").replace(".", " ")
            tools[op.operation_id] = PoolTool(
                toolkit=toolkit, operation_id=op.operation_id, name=op.original_name,
                app=str(tag.get("app", toolkit)), source=str(tag.get("source", "")), access=op.access,
                summary=summary, args_schema=op.args_schema)
        return tools
