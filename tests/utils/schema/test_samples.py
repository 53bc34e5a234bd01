"""Strings of a `pattern`, the same in every process (`utils.schema.samples`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from utils.schema.patterns import search
from utils.schema.samples import pattern_samples

ROOT = Path(__file__).resolve().parents[3]
NEGATED = r"^((https?|ftp):\/)?\/?([^:\/\s]+)(\/\w+)*\/[^#?\s]{3,8}$"
"""A negated class (sendgrid's csv link in the pool): rstr drew its characters in set order, which varies."""


def _samples_in_a_process(hash_seed: str) -> list[str]:
    code = f"import json; from utils.schema.samples import pattern_samples; print(json.dumps(pattern_samples({NEGATED!r}, 8)))"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_a_pattern_gives_the_same_strings_in_processes_that_hash_differently() -> None:
    first = _samples_in_a_process("1")
    assert first == _samples_in_a_process("2") == pattern_samples(NEGATED, 8)
    assert len(first) == 8 and all(search(NEGATED, s) for s in first)


def test_a_pattern_rstr_cannot_follow_gives_no_strings() -> None:
    assert pattern_samples(r"\p{L}+", 4) == []  # a Unicode property: Python's re parser refuses it
