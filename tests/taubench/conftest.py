"""Fixtures of the tau2 runtime tests: one data store and one runtime per domain and task set."""

from __future__ import annotations

import pytest

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.loader import DataStore


@pytest.fixture(scope="session")
def store() -> DataStore:
    """The verified tau2 data, read once for the whole session."""
    return DataStore()


@pytest.fixture(scope="session")
def airline(store: DataStore) -> DomainRuntime:
    return DomainRuntime("airline", store, "v1")


@pytest.fixture(scope="session")
def retail(store: DataStore) -> DomainRuntime:
    return DomainRuntime("retail", store, "v1")


@pytest.fixture(scope="session")
def runtimes(store: DataStore) -> dict[tuple[str, str], DomainRuntime]:
    """Runtimes by (task set, domain)."""
    return {(ts, d): DomainRuntime(d, store, ts) for ts in ("v1", "v0") for d in ("airline", "retail")}
