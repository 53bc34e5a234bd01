#!/usr/bin/env python3
"""The fidelity harness (`gecko fidelity`) end to end, offline: its wall time and headline figures.

A Gecko is started for the run (`--gecko-url auto`) with the rules engines, or with the local LLM stub behind
every role (`--stub`). Prints one JSON object: wall seconds, trajectories and steps, the headline figures, the
per-source state agreement, and where the report was written.

Run: `python perf/fidelity.py [--num-tasks N] [--sources bfcl,tau2-airline,tau2-retail,rest] [--stub]`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.fidelity.report import headline
from gecko_cli.main import main as gecko_main
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import run_stub


@contextlib.contextmanager
def _engine(stub: bool) -> Iterator[list[str]]:
    if not stub:
        yield []
        return
    with run_stub(StubConfig()) as server:
        yield ["--engine", server.model("gecko-stub")]


def measure(out: Path, flags: list[str], stub: bool) -> dict[str, Any]:
    """One harness run into `out`; its figures."""
    with _engine(stub) as engine:
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = gecko_main(["fidelity", "--gecko-url", "auto", "--output-dir", str(out), "--no-progress",
                               *engine, *flags])
        seconds = time.perf_counter() - started
    if code not in (0, None):
        raise SystemExit(f"gecko fidelity exited with {code}")
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    report = json.loads((run_dir / "fidelity.json").read_text())
    by_source = {source: {"stepwise_exact": tables["stepwise"]["exact"],
                          "stepwise_fields": tables["stepwise"]["field_agreement"],
                          "stepwise_changed": tables["stepwise"]["changed_agreement"],
                          "rollout_exact": tables["rollout"]["exact"]}
                 for source, tables in report["state"]["by_source"].items()}
    return {"engine": "stub" if stub else "rules", "flags": flags, "wall_seconds": round(seconds, 1),
            "trajectories": report["trajectories"], **headline(report), "state_by_source": by_source,
            "consistency": {k: v["rate"] for k, v in report["consistency"]["by_check"].items()},
            "report": str(run_dir / "fidelity.md")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-tasks", type=int, help="first N tasks of each source (default: all)")
    parser.add_argument("--sources", help="comma-separated sources (default: all)")
    parser.add_argument("--stub", action="store_true", help="every Gecko role on the local LLM stub")
    parser.add_argument("--output-dir", type=Path, help="keep the run here (default: a temporary directory)")
    args = parser.parse_args()
    flags = [*(["--num-tasks", str(args.num_tasks)] if args.num_tasks is not None else []),
             *(["--sources", args.sources] if args.sources else [])]
    if args.output_dir is not None:
        args.output_dir.mkdir(parents=True, exist_ok=True)
        print(json.dumps(measure(Path(tempfile.mkdtemp(dir=args.output_dir)), flags, args.stub)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(measure(Path(tmp), flags, args.stub)))


if __name__ == "__main__":
    main()
