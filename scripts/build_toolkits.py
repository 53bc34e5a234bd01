#!/usr/bin/env python
"""Build the benchmark toolkits (OpenAPI 3.1 documents) from the pinned, installed packages.

    python scripts/build_toolkits.py            # build what is out of date
    python scripts/build_toolkits.py --force    # rebuild everything

Targets (directories under `data/`, one JSON document per toolkit):

- `bfcl/openapi/single_turn/<task id>.json`: one per task of the single-turn categories;
- `bfcl/openapi/multi_turn/<ClassName>.json`: the eight multi-turn tool classes;
- `bfcl/openapi/memory/<ClassName>.json`: the memory classes (`bfcl_memory_toolkits.py`).

A target is skipped when its stamp (`<dir>/../.<name>.stamp`) records the same input hash: the
package version, the sha256 of each data file read, and the source of the converter and of these
scripts. A build writes into a temporary directory, validates every document with
openapi-spec-validator (in parallel), then swaps it in, so a failed build leaves the old one.
Output is byte-identical for the same inputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bfcl_memory_toolkits import memory_documents, memory_inputs
from bfcl_source import SourceFile, package_version
from bfcl_toolkits import (
    multi_turn_documents,
    multi_turn_inputs,
    single_turn_documents,
    single_turn_inputs,
)

from gecko.convert import dump_document
from utils.paths import DATA_DIR, REPO_ROOT

DEFAULT_DATA_DIR = DATA_DIR
CODE_GLOBS = ("gecko/convert/**/*.py", "gecko/convert/prompts/*", "scripts/bfcl_*.py", "scripts/build_toolkits.py",
              "benchmarks/bfcl/state_map.py")


@dataclass(frozen=True)
class Target:
    """One output directory and how to fill it."""

    name: str
    directory: str
    """Relative to the data dir."""
    inputs: Callable[[], list[SourceFile]]
    documents: Callable[[], Iterator[tuple[str, dict[str, Any]]]]
    version: Callable[[], str]


TARGETS = (
    Target("bfcl-single-turn", "bfcl/openapi/single_turn", single_turn_inputs, single_turn_documents, package_version),
    Target("bfcl-multi-turn", "bfcl/openapi/multi_turn", multi_turn_inputs, multi_turn_documents, package_version),
    Target("bfcl-memory", "bfcl/openapi/memory", memory_inputs, memory_documents, package_version),
)


def code_hash() -> str:
    """sha256 over the converter's and these scripts' source files."""
    digest = hashlib.sha256()
    for path in sorted({p for pattern in CODE_GLOBS for p in REPO_ROOT.glob(pattern) if p.is_file()}):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def input_key(target: Target, code: str) -> str:
    """The hash that decides whether `target` is up to date."""
    parts = {
        "target": target.name,
        "version": target.version(),
        "inputs": {f.name: f.sha256 for f in target.inputs()},
        "code": code,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _stamp_path(out_dir: Path) -> Path:
    return out_dir.parent / f".{out_dir.name}.stamp"


def up_to_date(out_dir: Path, key: str) -> bool:
    """Whether `out_dir` holds a complete build for `key`."""
    try:
        stamp = json.loads(_stamp_path(out_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(stamp, dict) and stamp.get("key") == key and out_dir.is_dir()
        and len(list(out_dir.glob("*.json"))) == stamp.get("documents")
    )


def _validate_file(path: Path) -> str | None:
    from gecko.convert import ConversionError, validate_document

    try:
        validate_document(json.loads(path.read_text(encoding="utf-8")))
    except ConversionError as exc:
        return f"{path.name}: {exc}"
    return None


def validate_dir(directory: Path, jobs: int) -> list[str]:
    """Problems of the documents in `directory` (empty when all pass openapi-spec-validator)."""
    paths = sorted(directory.glob("*.json"))
    if jobs > 1 and len(paths) > 50:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_validate_file, paths, chunksize=64))
    else:
        results = [_validate_file(p) for p in paths]
    return [r for r in results if r]


def build_target(target: Target, out_dir: Path, key: str, *, validate: bool, jobs: int) -> int:
    """Write every document of `target` into `out_dir` (replacing it); returns the count.

    Raises:
        RuntimeError: a document fails validation or two documents share a file name.
    """
    tmp = out_dir.parent / f".{out_dir.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        count = 0
        for stem, doc in target.documents():
            path = tmp / f"{stem}.json"
            if path.exists():
                raise RuntimeError(f"{target.name}: two documents named {path.name}")
            path.write_text(dump_document(doc), encoding="utf-8")
            count += 1
        problems = validate_dir(tmp, jobs) if validate else []
        if problems:
            raise RuntimeError(f"{target.name}: {len(problems)} invalid document(s); first: {problems[0]}")
        old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
        if out_dir.exists():
            out_dir.rename(old)
        tmp.rename(out_dir)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stamp = {"target": target.name, "key": key, "documents": count, "version": target.version()}
    _stamp_path(out_dir).write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return count


def main(argv: list[str] | None = None) -> int:
    """Build the selected targets; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="where target directories live")
    parser.add_argument("--only", action="append", choices=[t.name for t in TARGETS], help="build only this target")
    parser.add_argument("--force", action="store_true", help="rebuild even when the stamp says up to date")
    parser.add_argument("--no-validate", action="store_true", help="skip openapi-spec-validator")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="validation processes")
    args = parser.parse_args(argv)
    code = code_hash()
    for target in TARGETS:
        if args.only and target.name not in args.only:
            continue
        out_dir = args.data_dir / target.directory
        key = input_key(target, code)
        if not args.force and up_to_date(out_dir, key):
            print(f"{target.name}: up to date ({out_dir})")
            continue
        started = time.perf_counter()
        try:
            count = build_target(target, out_dir, key, validate=not args.no_validate, jobs=args.jobs)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"{target.name}: {count} toolkits in {time.perf_counter() - started:.1f} s ({out_dir})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
