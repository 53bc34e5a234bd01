"""Paths and helpers shared by the converter tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO_ROOT / "gecko" / "convert" / "examples"
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build_toolkits.py"


def run_build(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run scripts/build_toolkits.py into `data_dir`; fail the test with its output when it fails."""
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--data-dir", str(data_dir), *args],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc
