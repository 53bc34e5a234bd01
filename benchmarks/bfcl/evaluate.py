"""Score BFCL result files with the official checkers: `python -m benchmarks.bfcl.evaluate`.

    python -m benchmarks.bfcl.evaluate --result-dir results/bfcl --test-category all
    python -m benchmarks.bfcl.evaluate --result-dir results/bfcl --test-category live multi_turn --model my/model
    python -m benchmarks.bfcl.evaluate --file run/m/non_live/BFCL_v4_simple_python_result.json --score-dir score
    python -m benchmarks.bfcl.evaluate --result-dir <single-turn run>/result <multi-turn run>/result --score-dir s
    python -m benchmarks.bfcl.evaluate --result-dir results/bfcl/<run dir> --test-category all   # its result/

It reads the layout `bfcl evaluate` reads (`<result-dir>/<model_dir>/**/BFCL_v4_<category>_result.json`),
writes one JSON score file per category plus a `summary.json` per model under the score dir (default: a
`score` directory beside the result dir), and prints a table with the group averages and the overall score
(see `summary.py` for the weighting). Every category must be complete unless `--partial-eval` is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bfcl.categories import (
    ALL_CATEGORIES,
    CATEGORY_COLLECTIONS,
    UnknownCategoryError,
    category_of_result_file,
    expand_categories,
)
from benchmarks.bfcl.export import CorruptResultsError, model_dir_name, read_results
from benchmarks.bfcl.score_files import (
    category_file,
    category_score_path,
    summary_file,
    summary_path,
    write_json_document,
)
from benchmarks.bfcl.scoring import CategoryScore, ResultSetError, score_category
from benchmarks.bfcl.summary import ModelSummary, format_table, summarise

_GROUP_DIRS = frozenset({"non_live", "live", "multi_turn"})


class EvaluationInputError(ValueError):
    """The result files to score could not be determined (ambiguous or unnamed files, nothing found)."""


@dataclass(frozen=True)
class ResultFile:
    """One result file to score."""

    model: str
    """Model directory name (the model name with `/` replaced by `_`)."""
    category: str
    path: Path


def find_result_files(
    result_dir: Path, categories: Sequence[str], models: Sequence[str] | None = None
) -> tuple[list[ResultFile], list[Path]]:
    """Result files of the wanted categories under `result_dir`, and result files of other categories.

    Raises:
        EvaluationInputError: A model directory holds two files for the same category.
    """
    wanted_models = None if models is None else {model_dir_name(m) for m in models}
    found: list[ResultFile] = []
    skipped: list[Path] = []
    for model_dir in sorted(p for p in result_dir.iterdir() if p.is_dir()):
        if wanted_models is not None and model_dir.name not in wanted_models:
            continue
        seen: dict[str, Path] = {}
        for path in sorted(model_dir.rglob("*_result.json")):
            category = category_of_result_file(path.name)
            if category is None:
                continue
            if category not in ALL_CATEGORIES:
                skipped.append(path)
                continue
            if category not in categories:
                continue
            if category in seen:
                raise EvaluationInputError(
                    f"two result files for {category} under {model_dir}: {seen[category]}, {path}"
                )
            seen[category] = path
            found.append(ResultFile(model=model_dir.name, category=category, path=path))
    return found, skipped


def _model_of_file(path: Path) -> str:
    parent = path.parent
    return parent.parent.name if parent.name in _GROUP_DIRS else parent.name


def describe_files(paths: Sequence[Path], categories: Sequence[str], model: str | None) -> list[ResultFile]:
    """Result files given by path; category from the file name (or the only selected category).

    Raises:
        EvaluationInputError: A file name names no category and the selection is not one category.
    """
    files: list[ResultFile] = []
    for path in paths:
        category = category_of_result_file(path.name)
        if category is None:
            if len(categories) != 1:
                raise EvaluationInputError(
                    f"{path.name} is not named BFCL_v4_<category>_result.json; give one --test-category"
                )
            category = categories[0]
        if category not in categories:
            raise EvaluationInputError(f"{path} holds {category}, which is not among the selected categories")
        files.append(
            ResultFile(
                model=model_dir_name(model) if model else _model_of_file(path), category=category, path=path
            )
        )
    return files


def evaluate_files(
    files: Sequence[ResultFile], score_dir: Path, *, partial: bool = False
) -> list[ModelSummary]:
    """Score each file, write the score files and one summary per model; returns the summaries.

    Raises:
        ResultSetError: A file has unknown or duplicate ids, or misses ids without `partial`.
        CorruptResultsError: A file has a corrupt line.
    """
    by_model: dict[str, dict[str, CategoryScore]] = {}
    for item in files:
        score = score_category(item.category, read_results(item.path), partial=partial)
        write_json_document(
            category_score_path(score_dir, item.model, item.category),
            category_file(item.model, score, item.path),
        )
        by_model.setdefault(item.model, {})[item.category] = score
    summaries = []
    for model, scores in by_model.items():
        ordered = {name: scores[name] for name in ALL_CATEGORIES if name in scores}
        summary = summarise(model, ordered)
        write_json_document(summary_path(score_dir, model), summary_file(summary))
        summaries.append(summary)
    return summaries


def _clashes(files: Sequence[ResultFile]) -> list[str]:
    seen: set[tuple[str, str]] = set()
    clashes = []
    for item in files:
        key = (item.model, item.category)
        if key in seen:
            clashes.append(f"{item.model} {item.category}")
        seen.add(key)
    return clashes


def result_dir_of(path: Path) -> Path:
    """A run directory of the runner stands for its `result/` directory; any other path for itself."""
    if (path / "tasks.jsonl").is_file() and (path / "result").is_dir():
        return path / "result"
    return path


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bfcl.evaluate",
        description="Score BFCL result files with the official checkers.",
    )
    parser.add_argument(
        "--result-dir", type=Path, nargs="+",
        help="directories of <model_dir>/**/BFCL_v4_<category>_result.json (several: scored together, e.g. a "
             "single-turn and a multi-turn run for the overall score)",
    )
    parser.add_argument(
        "--test-category",
        nargs="+",
        default=["all"],
        metavar="NAME",
        help=f"categories or collections ({', '.join(CATEGORY_COLLECTIONS)}); default: all",
    )
    parser.add_argument("--model", nargs="+", help="only these models (names with / or _)")
    parser.add_argument("--file", type=Path, action="append", help="score this result file (repeatable)")
    parser.add_argument(
        "--score-dir", type=Path, help="where score files go (default: <first result dir>/../score)"
    )
    parser.add_argument(
        "--partial-eval", action="store_true", help="score the ids present; allow incomplete categories"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0 ok, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.result_dir is None and not args.file:
        parser.error("give --result-dir or --file")
    if args.score_dir is None and args.result_dir is None:
        parser.error("give --score-dir when scoring --file without --result-dir")
    result_dirs: list[Path] = [result_dir_of(path) for path in args.result_dir or ()]
    score_dir: Path = args.score_dir or result_dirs[0].resolve().parent / "score"
    try:
        categories = expand_categories(args.test_category)
        if args.file:
            if args.model and len(args.model) > 1:
                raise EvaluationInputError("--file takes at most one --model")
            files = describe_files(args.file, categories, args.model[0] if args.model else None)
        else:
            files = []
            for result_dir in result_dirs:
                found, skipped = find_result_files(result_dir, categories, args.model)
                files += found
                for path in skipped:
                    print(f"note: skipping {path} (category not supported here)", file=sys.stderr)
            clashes = _clashes(files)
            if clashes:
                raise EvaluationInputError(f"two result files for {clashes[0]} across the result dirs")
        if not files:
            raise EvaluationInputError("no result files found for the selected categories and models")
        summaries = evaluate_files(files, score_dir, partial=args.partial_eval)
    except (EvaluationInputError, UnknownCategoryError, ResultSetError, CorruptResultsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_table(summaries))
    print(f"\nscore files: {score_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
