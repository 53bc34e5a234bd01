"""Score files: one JSON document per category and a summary per model (pydantic models, atomic writes).

Layout under the score dir: `<model_dir>/<group>/BFCL_v4_<category>_score.json` and `<model_dir>/summary.json`.
These are single JSON documents, not the official header-plus-JSONL score files.
"""

from __future__ import annotations

import os
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchmarks.bfcl.categories import category_group, score_file_name
from benchmarks.bfcl.export import model_dir_name
from benchmarks.bfcl.scoring import CategoryScore, EntryScore
from benchmarks.bfcl.summary import WEIGHTING_NOTE, ModelSummary


def _checker_version() -> str:
    try:
        return f"bfcl-eval=={version('bfcl-eval')}"
    except PackageNotFoundError:
        return "bfcl-eval (version unknown)"


def _jsonable(value: Any, depth: int = 0) -> Any:
    """Plain JSON data from checker details, which may hold tool-class objects; those become strings."""
    if depth > 50:
        return str(value)
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1) for v in value]
    return str(value)


class FailedEntry(BaseModel):
    """One entry judged invalid."""

    id: str
    error_type: str | None
    errors: list[str]
    decoded: Any = None
    """What the checker saw (decoded calls)."""
    details: Any = None
    """Extra data from the official checker (state differences, execution results)."""


class CategoryScoreFile(BaseModel):
    """Contents of `BFCL_v4_<category>_score.json`."""

    model: str
    category: str
    group: str
    accuracy: float
    correct_count: int
    total_count: int
    """Entries scored."""
    dataset_count: int
    """Entries in the category."""
    partial: bool
    result_file: str | None
    checker: str
    failures: list[FailedEntry]


class CategoryAccuracy(BaseModel):
    """One category in a summary."""

    accuracy: float
    correct_count: int
    total_count: int
    dataset_count: int


class GroupAccuracy(BaseModel):
    """One group average in a summary."""

    accuracy: float | None
    categories: list[str]
    weighted_by_count: bool


class SummaryFile(BaseModel):
    """Contents of `<model_dir>/summary.json`."""

    model: str
    categories: dict[str, CategoryAccuracy]
    groups: dict[str, GroupAccuracy]
    overall: float | None
    partial: bool
    weighting: str
    checker: str


def _failed(entry: EntryScore) -> FailedEntry:
    return FailedEntry(
        id=entry.id,
        error_type=entry.error_type,
        errors=list(entry.errors),
        decoded=_jsonable(entry.decoded),
        details=_jsonable(entry.details),
    )


def category_file(model: str, score: CategoryScore, result_file: Path | None) -> CategoryScoreFile:
    """The score file document of one category."""
    return CategoryScoreFile(
        model=model,
        category=score.category,
        group=category_group(score.category),
        accuracy=score.accuracy,
        correct_count=score.correct,
        total_count=score.total,
        dataset_count=score.dataset_size,
        partial=score.partial,
        result_file=None if result_file is None else str(result_file),
        checker=_checker_version(),
        failures=[_failed(entry) for entry in score.failures],
    )


def summary_file(summary: ModelSummary) -> SummaryFile:
    """The summary document of one model."""
    return SummaryFile(
        model=summary.model,
        categories={
            name: CategoryAccuracy(
                accuracy=s.accuracy,
                correct_count=s.correct,
                total_count=s.total,
                dataset_count=s.dataset_size,
            )
            for name, s in summary.categories.items()
        },
        groups={
            name: GroupAccuracy(
                accuracy=g.accuracy, categories=list(g.categories), weighted_by_count=g.weighted
            )
            for name, g in summary.groups.items()
        },
        overall=summary.overall,
        partial=summary.partial,
        weighting=WEIGHTING_NOTE,
        checker=_checker_version(),
    )


def write_json_document(path: Path, document: BaseModel) -> None:
    """Write a pydantic model as indented JSON, atomically (temp file in the same dir, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(document.model_dump_json(indent=2) + "\n")
        os.replace(temp_name, path)
    except BaseException:
        if os.path.exists(temp_name):
            os.unlink(temp_name)
        raise


def category_score_path(score_dir: Path, model: str, category: str) -> Path:
    """Where a category's score file goes."""
    return score_dir / model_dir_name(model) / category_group(category) / score_file_name(category)


def summary_path(score_dir: Path, model: str) -> Path:
    """Where a model's summary goes."""
    return score_dir / model_dir_name(model) / "summary.json"
