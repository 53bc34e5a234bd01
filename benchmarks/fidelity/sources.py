"""The sources of real behaviour, by name. Each lives with its benchmark and is imported only when used (the
harness sits below the benchmark packages, as they build on its types).

`rest` is not a real system: it names the REST consistency checks of `consistency.py`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import NamedTuple

from benchmarks.fidelity.model import FidelitySource

REST = "rest"
"""The REST consistency checks (Gecko only)."""


@dataclass(frozen=True)
class SourceOptions:
    """What the sources are built with."""

    bfcl_category: str = "multi_turn_base"
    task_set: str = "v1"
    """tau2 task set."""


class _Entry(NamedTuple):
    target: str
    """`module:Class`."""
    kwargs: tuple[tuple[str, str], ...]
    """Constructor argument → `SourceOptions` field (or a fixed value, prefixed with `=`)."""


SOURCES: dict[str, _Entry] = {
    "bfcl": _Entry("benchmarks.bfcl.fidelity:BfclFidelitySource", (("category", "bfcl_category"),)),
    "tau2-airline": _Entry("benchmarks.taubench.fidelity:Tau2FidelitySource",
                           (("domain", "=airline"), ("task_set", "task_set"))),
    "tau2-retail": _Entry("benchmarks.taubench.fidelity:Tau2FidelitySource",
                          (("domain", "=retail"), ("task_set", "task_set"))),
}
"""Source name → where its class is and how to build it."""
SOURCE_NAMES: tuple[str, ...] = (*SOURCES, REST)


def build_source(name: str, options: SourceOptions) -> FidelitySource:
    """The source called `name`, built with `options`.

    Raises:
        ValueError: Unknown name (or a bad option for that source).
    """
    if name not in SOURCES:
        raise ValueError(f"unknown fidelity source {name!r}; known: {', '.join(SOURCE_NAMES)}")
    entry = SOURCES[name]
    module, _, attribute = entry.target.partition(":")
    kwargs = {arg: field[1:] if field.startswith("=") else getattr(options, field) for arg, field in entry.kwargs}
    source: FidelitySource = getattr(importlib.import_module(module), attribute)(**kwargs)
    return source
