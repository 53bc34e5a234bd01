"""`gecko verify` / `python -m gecko.verify`: verify a tool-call dataset (JSON Lines in, JSON Lines out)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from gecko.verify.run import VerifyError, VerifyOptions, verify_dataset
from gecko.verify.samples import FORMATS
from utils.llm.errors import LLMUsageError
from utils.settings import Settings
from utils.settings_cli import add_settings_flags, given_settings, setting_flags

VERIFY_SETTINGS = ("llm_", "state_dir", "log_level")
"""Settings that matter to a verification besides the role models (the server's network flags do not)."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="gecko verify",
        description="Replay every tool call of a dataset in Gecko and judge each sample: valid, invalid_call, "
                    "task_failed, malformed or untested. Formats: OpenAI chat (messages + tools), xLAM/APIGen "
                    "(query, tools, answers), BFCL (question + function, with --answers or ground_truth).",
    )
    p.add_argument("input", nargs="?", type=Path, help="JSON Lines dataset (default: stdin)")
    p.add_argument("-o", "--output", type=Path, help="result JSON Lines, one line per sample (default: stdout); "
                   "the summary goes to OUTPUT.summary.json and stdout")
    p.add_argument("--format", choices=FORMATS, help="input format (default: detected per line)")
    p.add_argument("--answers", type=Path, help="BFCL possible-answer file (JSON Lines {id, ground_truth})")
    p.add_argument("--keep", choices=("valid", "invalid"),
                   help="also write the input lines whose verdict is valid (or is not) to --kept")
    p.add_argument("--kept", type=Path, help="file of kept lines (default: OUTPUT's stem + .valid/.invalid.jsonl)")
    p.add_argument("-j", "--jobs", type=int, default=min(4, os.cpu_count() or 1),
                   help="worker processes (default: CPU count, at most 4)")
    p.add_argument("--concurrency", type=int, default=16,
                   help="samples in flight per worker while waiting for a model (default 16)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run of the same OUTPUT")
    p.add_argument("--force", action="store_true", help="overwrite an existing OUTPUT")
    p.add_argument("--limit", type=int, help="verify at most this many samples")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    add_settings_flags(p, [f for f in setting_flags() if f.role is not None or f.field.startswith(VERIFY_SETTINGS)])
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the verification; exit 0 when it ran (whatever the verdicts), 2 on a bad command line."""
    args = _parser().parse_args(argv)
    try:
        settings = Settings(**given_settings(args))
    except ValidationError as exc:
        print(f"gecko verify: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    options = VerifyOptions(
        input=args.input, output=args.output, settings=settings, format=args.format, answers=args.answers,
        keep=args.keep, kept=args.kept, workers=max(1, args.jobs), concurrency=max(1, args.concurrency),
        resume=args.resume, force=args.force, limit=args.limit,
        progress=not args.no_progress and args.output is not None and sys.stderr.isatty(),
    )
    try:
        summary = verify_dataset(options)
    except (VerifyError, LLMUsageError, OSError) as exc:
        print(f"gecko verify: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gecko verify: interrupted; finished results are kept (run again with --resume)", file=sys.stderr)
        return 130
    if args.output is not None:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print(json.dumps({"summary": summary}, ensure_ascii=False), file=sys.stderr)
    return 0
