"""The official `bfcl` CLI on a run's result files as they are (`gecko score --official`, the `bfcl` shim).

bfcl-eval is installed into the project's venv with `--no-deps` (its checkers and data only: a full install pulls
torch and every vendor SDK). Its CLI runs from its own venv, `.venv-bfcl`, built on first use from the pinned
"lite" set (`requirements-bfcl-official.txt`: the CLI's needs without torch; ~550 MB).

`bfcl evaluate` builds a model handler from the name of the directory the results sit in, and scores with that
handler's decoder. Our result files hold prompt-mode text (`"[f(a=1)]"`; multi-turn: step texts per turn), so
they are scored under a registered prompt-mode handler (`OFFICIAL_HANDLER`, which needs no API key): the run's
files are copied byte for byte under that name into a scratch result dir, and the official command

    BFCL_PROJECT_ROOT=<scratch> bfcl evaluate --model meta-llama/Llama-3.1-8B-Instruct \
        --test-category <categories> --result-dir <scratch>/result --score-dir <run dir>/score_official [--partial-eval]

writes its score files into the run directory. Run it through `python -m benchmarks.bfcl.official bfcl …` (what
`.venv/bin/bfcl` does) for any other `bfcl` command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bfcl.categories import category_dir, result_file_name, score_file_name
from benchmarks.bfcl.export import model_dir_name
from benchmarks.runner import OfficialCheck
from benchmarks.runner.official_venv import PinnedVenv
from utils.paths import REPO_ROOT

OFFICIAL_HANDLER = "meta-llama/Llama-3.1-8B-Instruct"
"""A registered prompt-mode model of bfcl-eval 2026.3.23: its decoder reads the `[f(a=1)]` text we write (an FC
handler would fail to decode it), and building it needs no API key."""
REQUIREMENTS = REPO_ROOT / "requirements-bfcl-official.txt"
"""The frozen "lite" set: every package the official CLI imports, exact versions, no torch."""
OFFICIAL_SCORE_DIR = "score_official"
TIMEOUT_S = 1800.0


def _pins() -> tuple[str, ...]:
    lines = (line.split("#", 1)[0].strip() for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines())
    return tuple(line for line in lines if line)


def bfcl_venv(path: Path | None = None) -> PinnedVenv:
    """The official CLI's venv (`.venv-bfcl`, or `path`)."""
    pins = _pins()
    package = tuple(p for p in pins if p.lower().replace("_", "-").startswith("bfcl-eval=="))
    return PinnedVenv(path or REPO_ROOT / ".venv-bfcl", no_deps=package,
                      pins=tuple(p for p in pins if p not in package), frozen=True)


@dataclass(frozen=True)
class OfficialScore:
    """The official score of one category."""

    category: str
    correct: int
    total: int
    accuracy: float


def _official_env(root: Path) -> dict[str, str]:
    # BFCL_PROJECT_ROOT keeps its result/score/.file_locks dirs (and a stray .env it would load) out of site-packages
    return {**os.environ, "BFCL_PROJECT_ROOT": str(root)}


def evaluate_official(result_dir: Path, model: str, categories: Sequence[str], score_dir: Path, *, partial: bool,
                      venv: PinnedVenv | None = None) -> tuple[dict[str, OfficialScore], str]:
    """Score our result files with `bfcl evaluate` under `OFFICIAL_HANDLER`.

    Args:
        result_dir: A run's `result/` directory.
        model: The run's model (its directory under `result_dir`).
        categories: The categories to score (each must have a result file).
        score_dir: Where the official score files go (emptied first: the CLI reads back every model in it).
        partial: Pass `--partial-eval` (a `--num-tasks`/`--ids` run).
        venv: The official CLI's venv (default `.venv-bfcl`, built on first use).

    Returns:
        The official score per category, and the command as run.

    Raises:
        VenvError: The venv could not be built.
        RuntimeError: `bfcl evaluate` failed or wrote no score file (its last lines are in the message).
    """
    venv = venv or bfcl_venv()
    venv.ensure()
    handler_dir = model_dir_name(OFFICIAL_HANDLER)
    if score_dir.exists():
        shutil.rmtree(score_dir)
    with tempfile.TemporaryDirectory(prefix="bfcl-official-") as scratch:
        root = Path(scratch)
        for category in categories:
            group = category_dir(category)
            source = result_dir / model_dir_name(model) / group / result_file_name(category)
            target = root / "result" / handler_dir / group / result_file_name(category)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        command = [str(venv.bin("bfcl")), "evaluate", "--model", OFFICIAL_HANDLER, "--test-category",
                   ",".join(categories), "--result-dir", str(root / "result"), "--score-dir", str(score_dir),
                   *(["--partial-eval"] if partial else [])]
        done = subprocess.run(command, cwd=root, env=_official_env(root), capture_output=True, text=True,  # noqa: S603
                              timeout=TIMEOUT_S, check=False)
    shown = f"BFCL_PROJECT_ROOT=<scratch> {' '.join(command)}"
    scores = {}
    for category in categories:
        path = score_dir / handler_dir / category_dir(category) / score_file_name(category)
        if done.returncode != 0 or not path.exists():
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
            raise RuntimeError(f"bfcl evaluate failed (exit {done.returncode}) for {category}: {tail}")
        header = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        scores[category] = OfficialScore(category, int(header["correct_count"]), int(header["total_count"]),
                                         float(header["accuracy"]))
    return scores, shown


SHIM = """#!/bin/sh
# bfcl-eval is installed in this venv with --no-deps (checkers and data only); its CLI runs from .venv-bfcl, the
# pinned "lite" set, built on first use (benchmarks/bfcl/official.py). Written by `make setup`.
exec "$(dirname "$0")/python" -m benchmarks.bfcl.official bfcl "$@"
"""


def check_against_official(done: Mapping[str, Sequence[float]], dataset_size: Callable[[str], int], result_dir: Path,
                           model: str, score_dir: Path, notes: tuple[str, ...]) -> OfficialCheck:
    """`bfcl evaluate` on a run's result files beside our own scores: correct and scored counts per category.

    Args:
        done: our score of every scored task, by category.
        dataset_size: a category's task count (fewer scored tasks make the official run a partial one).
        result_dir: where the run's result files are.
        model: the run's model (its result files' directory name).
        score_dir: where the official score files go.
        notes: what the check should say about how it was scored.
    """
    if not done:
        return OfficialCheck(problems=("the run has no scored task: nothing to check",))
    categories = sorted(done)
    partial = any(len(done[c]) < dataset_size(c) for c in categories)
    try:
        official, command = evaluate_official(result_dir, model, categories, score_dir, partial=partial)
    except (RuntimeError, OSError) as exc:
        return OfficialCheck(problems=(str(exc),))
    rows: list[tuple[str, object, object]] = []
    for category in categories:
        rows.append((f"{category} correct", int(sum(done[category])), official[category].correct))
        rows.append((f"{category} scored", len(done[category]), official[category].total))
    return OfficialCheck(tuple(rows), (command,), notes=notes)


def install_shim(path: Path) -> None:
    """Replace the `bfcl` console script bfcl-eval installed (which cannot run without its dependencies) by one
    that runs the official CLI from its venv."""
    path.write_text(SHIM, encoding="utf-8")
    path.chmod(0o755)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m benchmarks.bfcl.official bfcl ARGS…`: the official `bfcl` CLI from its venv (built on first use),
    what `.venv/bin/bfcl` runs; `… install-shim PATH`: write that `bfcl` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 2 and args[0] == "install-shim":
        install_shim(Path(args[1]))
        return 0
    if not args or args[0] != "bfcl":
        print("usage: python -m benchmarks.bfcl.official bfcl [bfcl arguments …] | install-shim PATH",
              file=sys.stderr)
        return 2
    venv = bfcl_venv()
    venv.ensure()
    os.environ.setdefault("BFCL_PROJECT_ROOT", os.getcwd())
    os.execv(venv.bin("bfcl"), [str(venv.bin("bfcl")), *args[1:]])  # noqa: S606 - the official CLI, our arguments
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
