"""Result schemas inferred by an LLM for tools whose source declares none (paper, appendix A.7).

The model is reached through one callable, `infer(prompt_text, json_schema) -> dict`, which must
return a JSON object fitting `json_schema` (the CLI builds it from `utils.llm` only when `--model`
is given; tests pass a fake). Each proposal is checked (`schema_problems`); one retry carries the
problems back; a schema that still fails is dropped and the tool keeps the generic result schema.
Accepted schemas are cached on disk, one file per content hash of (prompt version, model, tool
name, description, parameters), so a toolkit is paid for once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from string import Template
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from gecko.convert.model import ConversionError, ToolkitSpec, ToolSpec
from gecko.convert.schema import COMPONENTS_PREFIX, iter_refs, walk_schemas
from utils.jsonutil import content_hash

log = logging.getLogger(__name__)

InferFn = Callable[[str, dict[str, Any]], dict[str, Any]]
"""`infer(prompt_text, json_schema)` → a JSON object that fits `json_schema`."""
PROMPT_FILE = Path(__file__).parent / "prompts" / "response_schema.md"
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"response_schema": {"type": "object"}},
    "required": ["response_schema"],
    "additionalProperties": False,
}
"""What the model must answer: `{"response_schema": {...}}`."""


@dataclass(frozen=True)
class Prompt:
    """The converter prompt template and its version (a hash of its text, part of the cache key)."""

    template: str
    version: str

    @classmethod
    def load(cls, path: Path = PROMPT_FILE) -> Prompt:
        """Read the template from `path`."""
        text = path.read_text(encoding="utf-8")
        return cls(text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:12])

    def render(self, tool: ToolSpec, definitions: dict[str, Any]) -> str:
        """The prompt text for one tool; `definitions` are the shared schemas its arguments reference."""
        parameters = json.dumps(tool.parameters, indent=1, ensure_ascii=False)
        if definitions:
            parameters += "\n\nDefinitions referenced there as #/components/schemas/<name>:\n" + json.dumps(
                definitions, indent=1, ensure_ascii=False
            )
        return Template(self.template).safe_substitute(
            tool_name=tool.name, description=tool.description or "(none)", parameters=parameters
        )


def schema_problems(schema: Any) -> list[str]:
    """What is wrong with a proposed result schema; empty when it is acceptable.

    Acceptable: valid JSON Schema 2020-12; top-level `oneOf` of at least two schemas
    (success, error); no `$ref`/`$defs`/`definitions`; every property described.
    """
    if not isinstance(schema, dict):
        return ["the schema must be a JSON object"]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return [f"not a valid JSON Schema: {exc.message}"]
    problems: list[str] = []
    branches = schema.get("oneOf")
    if not isinstance(branches, list) or len(branches) < 2:
        problems.append("the top level must be `oneOf` with a success branch and an error branch")
    elif not all(isinstance(b, dict) and b for b in branches):
        problems.append("every `oneOf` branch must be a non-empty schema object")
    if iter_refs(schema):
        problems.append("`$ref` is not allowed: write every schema inline")
    undescribed: list[str] = []
    for path, node in walk_schemas(schema):
        if "$defs" in node or "definitions" in node:
            problems.append(f"`$defs`/`definitions` are not allowed (at {path or '/'})")
        for name, sub in (node.get("properties") or {}).items():
            if not (isinstance(sub, dict) and isinstance(sub.get("description"), str) and sub["description"].strip()):
                undescribed.append(f"{path}/properties/{name}")
    if undescribed:
        problems.append("these properties have no description: " + ", ".join(sorted(set(undescribed))[:20]))
    return problems


def _referenced(tool: ToolSpec, schemas: dict[str, Any]) -> dict[str, Any]:
    todo = [r for r in iter_refs(tool.parameters) if r.startswith(COMPONENTS_PREFIX)]
    found: dict[str, Any] = {}
    while todo:
        name = todo.pop()[len(COMPONENTS_PREFIX):].split("/")[0]
        if name in schemas and name not in found:
            found[name] = schemas[name]
            todo += [r for r in iter_refs(schemas[name]) if r.startswith(COMPONENTS_PREFIX)]
    return dict(sorted(found.items()))


@dataclass
class ResponseInferrer:
    """Fills in missing result schemas of a toolkit spec with the help of `infer`.

    Attributes:
        failures: tool names whose schema could not be inferred (they keep the generic schema).
    """

    infer: InferFn
    model: str
    cache_dir: Path | None = None
    prompt: Prompt = field(default_factory=Prompt.load)
    strict: bool = False
    """Raise ConversionError instead of falling back to the generic schema when inference fails."""
    failures: list[str] = field(default_factory=list)

    def apply(self, spec: ToolkitSpec) -> ToolkitSpec:
        """`spec` with an inferred result schema for every tool that has none."""
        tools = tuple(self.tool(t, spec.schemas) if t.response is None else t for t in spec.tools)
        return replace(spec, tools=tools)

    def tool(self, tool: ToolSpec, schemas: dict[str, Any]) -> ToolSpec:
        """`tool` with an inferred result schema, or unchanged when none could be had."""
        definitions = _referenced(tool, schemas)
        key = content_hash(self.prompt.version, self.model, tool.name, tool.description, tool.parameters, definitions)
        schema = self._cached(key)
        if schema is None:
            schema = self._ask(tool, definitions)
            if schema is None:
                self.failures.append(tool.name)
                return tool
            self._store(key, schema)
        return replace(tool, response=schema, response_origin="inferred")

    def _ask(self, tool: ToolSpec, definitions: dict[str, Any]) -> dict[str, Any] | None:
        text = self.prompt.render(tool, definitions)
        problems: list[str] = []
        for _ in range(2):
            try:
                answer = self.infer(text, ANSWER_SCHEMA)
            except Exception as exc:  # the client is pluggable; any failure means "no schema", logged
                if self.strict:
                    raise ConversionError(f"response schema of {tool.name}: inference failed: {exc}") from exc
                log.warning("response schema of %s: inference failed: %s", tool.name, exc)
                return None
            schema = answer.get("response_schema") if isinstance(answer, dict) else None
            problems = schema_problems(schema)
            if not problems:
                return schema
            text = (
                self.prompt.render(tool, definitions)
                + "\n\nYour previous answer was rejected for these reasons:\n- "
                + "\n- ".join(problems)
                + "\nAnswer again with a corrected schema."
            )
        message = f"response schema of {tool.name}: rejected twice: {'; '.join(problems)}"
        if self.strict:
            raise ConversionError(message)
        log.warning("%s; using the generic schema", message)
        return None

    def _path(self, key: str) -> Path | None:
        return self.cache_dir / f"{key}.json" if self.cache_dir is not None else None

    def _cached(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        try:
            schema = json.loads(path.read_text(encoding="utf-8")).get("response_schema")
        except (OSError, ValueError, AttributeError):
            return None
        return schema if not schema_problems(schema) else None

    def _store(self, key: str, schema: dict[str, Any]) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        record = {"model": self.model, "prompt_version": self.prompt.version, "response_schema": schema}
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
