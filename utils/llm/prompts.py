"""Prompt files: Markdown with a small front matter that carries the prompt's version.

```
---
version: semantic-2026-11-22.1
---
The prompt text …
```

The version goes into the LLM cache key, so editing a prompt (and bumping its version) never
serves replies made for the old text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utils.llm.stage_tags import section

_FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt."""

    name: str
    version: str
    text: str


def parse_prompt(name: str, raw: str) -> Prompt:
    """Parse prompt text with its front matter.

    Raises:
        ValueError: no front matter or no `version`.
    """
    raw = raw.replace("\r\n", "\n")
    match = _FRONT.match(raw)
    if not match:
        raise ValueError(f"prompt {name!r} must start with a '---' front matter holding 'version: …'")
    fields = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    version = fields.get("version", "")
    if not version:
        raise ValueError(f"prompt {name!r} has no 'version' in its front matter")
    return Prompt(name=name, version=version, text=raw[match.end():].strip())


def load_prompt(path: Path | str) -> Prompt:
    """Read and parse one prompt file (its stem is the prompt's name)."""
    path = Path(path)
    return parse_prompt(path.stem, path.read_text(encoding="utf-8"))


def stage_messages(prompt: Prompt, sections: Sequence[tuple[str, Any]]) -> list[dict[str, str]]:
    """System message (the prompt text) and a user message made of tagged data sections.

    Args:
        prompt: the stage's prompt.
        sections: (name, value) pairs; values are rendered as compact JSON (strings verbatim).
    """
    user = "\n\n".join(section(name, value) for name, value in sections)
    return [{"role": "system", "content": prompt.text}, {"role": "user", "content": user}]


def clip(value: Any, limit: int) -> Any:
    """`value` itself when its JSON is at most `limit` characters, else a truncated JSON string with a note."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    if len(text) <= limit:
        return value
    return text[:limit] + f"… [truncated, {len(text)} characters in all]"


def inline_refs(schema: Any, max_expansions: int = 200) -> Any:
    """A copy of a schema with local `#/$defs/…` references replaced by their targets, for prompts.

    Recursive references stay as `$ref` (then the original `$defs` are kept), so the result is finite;
    the number of expansions is bounded for very large schemas.
    """
    if not isinstance(schema, dict):
        return schema
    defs = raw_defs if isinstance(raw_defs := schema.get("$defs"), dict) else {}
    kept: set[str] = set()
    budget = [max_expansions]

    def walk(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(v, stack) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref[len("#/$defs/"):].replace("~1", "/").replace("~0", "~")
            if key in defs and key not in stack and budget[0] > 0:
                budget[0] -= 1
                target = walk(defs[key], (*stack, key))
                siblings = {k: walk(v, stack) for k, v in node.items() if k != "$ref"}
                return {**target, **siblings} if isinstance(target, dict) else target
            kept.add(key)
        return {k: walk(v, stack) for k, v in node.items() if k != "$defs"}

    out = walk(schema, ())
    if kept and isinstance(out, dict):
        out["$defs"] = defs  # recursive targets may reference any other definition: keep them all
    return out
