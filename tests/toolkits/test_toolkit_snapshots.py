"""Start-up (issue 33 item 8): a warm load reads each loaded toolkit from its snapshot instead of building it again,
and what it reads is exactly what a fresh load builds; a changed document, Gecko code or loading setting loads afresh;
a damaged snapshot is ignored with a warning."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import gecko.toolkits.loader as loader
import gecko.toolkits.validation_cache as validation_cache
from gecko.toolkits import load_toolkits
from gecko.toolkits.registry import ToolkitRegistry
from tests.conftest import TESTS_DIR, TOOLKITS_DIR
from utils.paths import EXAMPLE_TOOLKITS_DIR
from utils.schema.fastcheck import FastCheck
from utils.schema.formats import FORMAT_CHECKER

SAMPLES: list[Any] = [{}, {"id": 1}, {"id": "1", "name": "x", "title": "t", "body": "b"}, {"limit": -1}, [], "x", None]
"""Instances every operation's checks are asked about (valid for some, invalid for others)."""


@pytest.fixture
def documents(tmp_path: Path) -> list[Path]:
    """Copies of the test toolkits, the vendor documents with faults to repair and the bundled examples."""
    dirs = []
    for name, source in (("tests", TOOLKITS_DIR), ("vendor", TESTS_DIR / "data" / "vendor"),
                         ("examples", EXAMPLE_TOOLKITS_DIR)):
        shutil.copytree(source, tmp_path / name)
        dirs.append(tmp_path / name)
    return dirs


def _plain(value: Any) -> Any:
    """A comparable picture of a loaded toolkit: dataclasses field by field, validators as their class and schema."""
    if isinstance(value, FastCheck):
        return ("FastCheck", _plain(value.__reduce__()[1]))
    if hasattr(value, "schema") and hasattr(value, "iter_errors"):  # a jsonschema validator
        return (type(value).__name__, _plain(value.schema), getattr(value, "format_checker", None) is FORMAT_CHECKER)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)})
    if isinstance(value, BaseModel):
        return (type(value).__name__, value.model_dump())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(v) for v in value])
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, sorted(repr(_plain(v)) for v in value))
    return value


def _verdicts(registry: ToolkitRegistry) -> list[Any]:
    """What every operation's argument, response and not-found checks say about `SAMPLES` (validity and errors)."""
    found = []
    for toolkit in registry.toolkits.values():
        for op in toolkit.operations.values():
            binding = op.world.resource if op.world is not None else None
            checks = [op.args_check, op.response_check, binding.not_found[2] if binding and binding.not_found else None,
                      op.args_validator, op.response_validator]  # the Python validators on their own: every keyword
            for check in checks:
                for sample in SAMPLES:
                    if check is not None:
                        found.append((op.tool_name, check.is_valid(sample),
                                      sorted(e.message for e in check.iter_errors(sample))))
                    found.append((op.tool_name, op.response_is_valid(sample)))
    return found


def _references(registry: ToolkitRegistry) -> int:
    """Argument and response schemas that refer to their `$defs` (their validators resolve references)."""
    return sum(1 for t in registry.toolkits.values() for op in t.operations.values()
               for schema in (op.args_schema, op.response_schema) if '"$ref": "#/$defs/' in json.dumps(schema))


def _boom(*_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError("built again on a warm load")


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warnings the loader logged (the faults it repaired), then forgotten."""
    said = [r.getMessage() for r in caplog.records if r.name == loader.__name__ and r.levelno == logging.WARNING]
    caplog.clear()
    return said


def test_a_warm_load_reads_exactly_what_a_fresh_load_builds(documents, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    fresh = load_toolkits(documents)  # no cache at all
    repaired = _said(caplog)
    load_toolkits(documents, cache_dir=tmp_path / "cache")  # cold: builds and keeps each toolkit
    caplog.clear()
    monkeypatch.setattr(loader, "build_toolkit", _boom)
    monkeypatch.setattr(loader, "check_document", _boom)
    monkeypatch.setattr(loader, "repair_document", _boom)
    warm = load_toolkits(documents, cache_dir=tmp_path / "cache")
    assert _said(caplog) == repaired and any("vendor" in fault for fault in repaired)  # said again, and the same
    assert list(warm.toolkits) == list(fresh.toolkits) and warm.tool_count == fresh.tool_count > 10
    for name, toolkit in fresh.toolkits.items():
        assert _plain(warm.toolkits[name]) == _plain(toolkit), name
    assert _verdicts(warm) == _verdicts(fresh) and _references(warm) > 5
    assert any(op.world is not None and op.world.resource is not None and op.world.resource.not_found
               for t in warm.toolkits.values() for op in t.operations.values())  # the not-found checks were compared


def test_a_changed_document_loads_afresh_and_only_it(documents, tmp_path, monkeypatch):
    load_toolkits(documents, cache_dir=tmp_path / "cache")
    notes = documents[0] / "notes.json"
    notes.write_text(notes.read_text().replace('"Notes', '"Changed notes'), encoding="utf-8")
    built: list[str] = []
    real = loader.build_toolkit
    monkeypatch.setattr(loader, "build_toolkit", lambda path, *a, **k: built.append(path.name) or real(path, *a, **k))
    registry = load_toolkits(documents, cache_dir=tmp_path / "cache")
    assert built == ["notes.json"] and registry.toolkits["notes"].title.startswith("Changed notes")


def test_a_moved_document_is_another_toolkit(documents, tmp_path):
    load_toolkits(documents, cache_dir=tmp_path / "cache")
    shutil.move(documents[0] / "notes.json", documents[0] / "memos.json")
    registry = load_toolkits(documents, cache_dir=tmp_path / "cache")
    memos = registry.toolkits["memos"]
    assert "notes" not in registry.toolkits and memos.source.endswith("memos.json")
    assert {op.toolkit for op in memos.operations.values()} == {"memos"}


@pytest.mark.parametrize("change", [{"strict": True}, {"strict_validation": True}, {"max_nodes": 500_000}, "version"])
def test_another_gecko_or_loading_setting_loads_afresh(documents, tmp_path, monkeypatch, change):
    load_toolkits(documents, cache_dir=tmp_path / "cache")
    if change == "version":
        monkeypatch.setattr(validation_cache, "cache_tag", lambda: "gecko-99.0-other")
        change = {}
    built: list[str] = []
    real = loader.build_toolkit
    monkeypatch.setattr(loader, "build_toolkit", lambda path, *a, **k: built.append(path.name) or real(path, *a, **k))
    load_toolkits(documents[:1], cache_dir=tmp_path / "cache", **change)
    assert sorted(built) == ["legacy30.yaml", "notes.json"]


@pytest.mark.parametrize("damage", [b"", b"not a pickle", b"\x80\x05garbage", "other toolkit"])
def test_a_damaged_snapshot_is_ignored_with_a_warning(documents, tmp_path, caplog, damage):
    fresh = load_toolkits(documents[:1])
    load_toolkits(documents[:1], cache_dir=tmp_path / "cache")
    snapshots = sorted((tmp_path / "cache" / "snapshots").glob("*/*"))
    assert len(snapshots) == 2
    kept = [snapshot.read_bytes() for snapshot in snapshots]
    for index, snapshot in enumerate(snapshots):  # "other toolkit": the other document's snapshot under this one's name
        snapshot.write_bytes(kept[1 - index] if damage == "other toolkit" else damage)
    with caplog.at_level(logging.WARNING):
        warm = load_toolkits(documents[:1], cache_dir=tmp_path / "cache")
    assert {name: _plain(t) for name, t in warm.toolkits.items()} == {n: _plain(t) for n, t in fresh.toolkits.items()}
    said = [r.getMessage() for r in caplog.records if "cannot be read" in r.getMessage()]
    assert len(said) == 2 and "loading the document afresh" in said[0]
    caplog.clear()
    load_toolkits(documents[:1], cache_dir=tmp_path / "cache")  # rewritten by the load that ignored them
    assert not [r for r in caplog.records if "cannot be read" in r.getMessage()]


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_snapshots_another_user_could_write_are_not_read(documents, tmp_path, monkeypatch, caplog):
    load_toolkits(documents[:1], cache_dir=tmp_path / "cache")
    (tmp_path / "cache" / "snapshots").chmod(0o777)
    monkeypatch.setattr(loader, "build_toolkit", _boom)
    with caplog.at_level(logging.WARNING), pytest.raises(AssertionError, match="built again"):
        load_toolkits(documents[:1], cache_dir=tmp_path / "cache")
    assert any("not this user's alone" in r.getMessage() for r in caplog.records)


def test_a_new_version_keeps_only_the_most_recently_used_caches(tmp_path):
    """Each code change makes new cache directories (20 MB of snapshots for BFCL): older ones are removed."""
    now = time.time()
    for kind in ("validated", "snapshots"):
        for age in range(6):  # old-0 used a minute ago … old-5 six minutes ago
            (tmp_path / kind / f"old-{age}").mkdir(parents=True)
            os.utime(tmp_path / kind / f"old-{age}", (now - 60 * (age + 1),) * 2)
    load_toolkits([TOOLKITS_DIR], cache_dir=tmp_path)
    for kind in ("validated", "snapshots"):
        kept = {p.name for p in (tmp_path / kind).iterdir()}
        assert len(kept) == 4 and {"old-0", "old-1", "old-2"} < kept, kept  # and the one made now
    os.utime(tmp_path / "snapshots" / "old-2", (now - 3600,) * 2)
    load_toolkits([TOOLKITS_DIR], cache_dir=tmp_path)  # the current version's directory is marked used, nothing goes
    assert len(list((tmp_path / "snapshots").iterdir())) == 4
