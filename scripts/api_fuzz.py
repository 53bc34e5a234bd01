#!/usr/bin/env python3
"""`make fuzz`: schemathesis (pinned, its own venv) against a real Gecko (2 workers, an API key) built from
Gecko's own OpenAPI document: every phase (examples, coverage, fuzzing, stateful over the document's links),
every check. Fails on any failure, on 5xx, and when fewer than `--min-cases` cases ran.

    python scripts/api_fuzz.py [--phases examples,coverage,fuzzing,stateful] [--seed S] [--min-cases N]

Examples per phase and the known disagreements with schemathesis are in `.ci/schemathesis.toml`.

Prints one JSON line with the figures (cases, seconds, seed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

import httpx

from utils.paths import EXAMPLE_TOOLKITS_DIR, REPO_ROOT
from utils.procs import gecko_server

SCHEMATHESIS = "schemathesis==4.32.5"
FUZZ_VENV = REPO_ROOT / ".venv-fuzz"
CONFIG = REPO_ROOT / ".ci" / "schemathesis.toml"
HOOKS = REPO_ROOT / ".ci" / "schemathesis_hooks.py"
"""Drops the 422s of a fault policy's two cross-field rules, which JSON Schema cannot state (see the file)."""
LIFECYCLE_CHECKS = "use_after_free,ensure_resource_availability"
"""Checks left out: they judge a resource's lifecycle across a stateful run, which a simulated tool does not have
(why: `.ci/schemathesis.toml`); on the command line, because `--checks all` there overrides the file's `[checks]`."""
TOOLKITS = [EXAMPLE_TOOLKITS_DIR, REPO_ROOT / "tests" / "data" / "openapi"]


def schemathesis_binary() -> Path:
    """The pinned schemathesis, installed in its own venv (its dependencies never touch the project's)."""
    binary = FUZZ_VENV / "bin" / "schemathesis"
    stamp = FUZZ_VENV / ".installed"
    if not binary.exists() or not stamp.exists() or stamp.read_text() != SCHEMATHESIS:
        venv.create(FUZZ_VENV, with_pip=True, clear=True)
        subprocess.run([str(FUZZ_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        SCHEMATHESIS], check=True)
        stamp.write_text(SCHEMATHESIS)
    return binary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phases", default="examples,coverage,fuzzing,stateful", help="schemathesis phases")
    parser.add_argument("--seed", type=int, default=20261123, help="hypothesis seed (fixed: CI is reproducible)")
    parser.add_argument("--min-cases", type=int, default=2000, help="fail when fewer cases were generated")
    args = parser.parse_args(argv)
    binary = schemathesis_binary()
    key = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="gecko-fuzz-") as tmp:
        state = Path(tmp)
        log_path = state / "server.log"
        with gecko_server(TOOLKITS, workers=2, state_dir=state / "state", log_path=log_path, api_key=key) as url:
            auth = {"Authorization": f"Bearer {key}"}
            session = httpx.get(f"{url}/session-id", headers=auth, timeout=10).json()["session_id"]
            command = [str(binary), "--config-file", str(CONFIG), "run", f"{url}/openapi.json", "--checks", "all",
                       "--exclude-checks", LIFECYCLE_CHECKS,
                       "--workers", "2", "--seed", str(args.seed),
                       "--phases", args.phases,
                       "-H", f"Authorization: Bearer {key}", "-H", f"X-Session-ID: {session}"]
            started = time.monotonic()
            # cwd: schemathesis keeps a crash cache (.schemathesis/) in its working directory; not in the repo
            done = subprocess.run(command, capture_output=True, text=True, cwd=tmp,
                                  env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_HOOKS": str(HOOKS)})
            seconds = time.monotonic() - started
        output = (done.stdout + done.stderr).replace(key, "[key]")
        server_log = log_path.read_text(errors="replace")
    print(output)
    generated = re.search(r"(\d+) generated", output)
    cases = int(generated.group(1)) if generated else 0
    crashed = "unhandled error" in server_log or "Traceback" in server_log
    print(json.dumps({"cases": cases, "seconds": round(seconds, 1), "seed": args.seed, "exit": done.returncode,
                      "phases": args.phases, "server_errors_logged": crashed}))
    if crashed:
        print(f"fuzz: the server logged errors:\n{server_log[-4000:]}", file=sys.stderr)
    if done.returncode != 0 or crashed:
        return 1
    if cases < args.min_cases:
        print(f"fuzz: only {cases} cases ran (< {args.min_cases})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
