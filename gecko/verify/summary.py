"""The summary of a verification run: counts per verdict, per error kind and per tool, and the samples that
did not pass (named, so known data bugs can be read off the summary)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

NAMED_LIMIT = 1000
"""Samples that did not pass, named in the summary with their reason (the result file has them all)."""
TOOLS_LIMIT = 200
"""Tools listed in the summary, most invalid calls first."""


@dataclass
class Summary:
    """Accumulates result lines (in any order); `public()` is the JSON summary."""

    samples: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)
    calls: int = 0
    tools: dict[str, Counter[str]] = field(default_factory=dict)
    not_passed: list[dict[str, str]] = field(default_factory=list)

    def add(self, result: dict[str, Any]) -> None:
        """Count one result line."""
        self.samples += 1
        self.verdicts[result["verdict"]] += 1
        self.formats[str(result.get("format"))] += 1
        for call in result.get("calls", ()):
            self.calls += 1
            per_tool = self.tools.setdefault(str(call.get("tool")), Counter())
            per_tool[call["status"]] += 1
            for error in call.get("errors", ()):
                self.error_kinds[error["keyword"]] += 1
        if result["verdict"] != "valid" and len(self.not_passed) < NAMED_LIMIT:
            self.not_passed.append({"id": result["id"], "verdict": result["verdict"], "reason": result["reason"]})

    def public(self) -> dict[str, Any]:
        """The summary as JSON: tools sorted by invalid calls, then by name."""
        tools = sorted(self.tools.items(), key=lambda item: (-item[1]["invalid"], item[0]))
        return {
            "samples": self.samples,
            "verdicts": dict(self.verdicts.most_common()),
            "formats": dict(self.formats),
            "calls": self.calls,
            "error_kinds": dict(self.error_kinds.most_common()),
            "tools_total": len(tools),
            "tools": {name: {"calls": sum(c.values()), "invalid": c["invalid"]} for name, c in tools[:TOOLS_LIMIT]},
            "not_passed": self.not_passed,
            "not_passed_truncated": sum(v for k, v in self.verdicts.items() if k != "valid") > len(self.not_passed),
        }
