"""The pool build: pinned sources → one OpenAPI toolkit per app (and source) plus a manifest; see README.md."""

from benchmarks.openworld.pool.build import PoolBuildError, build_pool
from benchmarks.openworld.pool.spec import PoolSources, load_sources

__all__ = ["PoolBuildError", "PoolSources", "build_pool", "load_sources"]
