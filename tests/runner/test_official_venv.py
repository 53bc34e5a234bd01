"""`PinnedVenv.ensure` with the real venv module and pip, offline (two wheels made here): it says how long the
build takes and how long each step took, and keeps pip's "dependency conflicts" notes about the pins out of the
console (they go to the build log)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from benchmarks.runner.official_venv import PinnedVenv, VenvError

pytestmark = pytest.mark.slow


def _wheel(directory: Path, name: str, version: str, requires: str = "") -> None:
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + (
        f"Requires-Dist: {requires}\n" if requires else "")
    files = {f"{name}/__init__.py": "", f"{info}/METADATA": metadata,
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(directory / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


def test_building_says_how_long_and_keeps_pips_conflict_notes_in_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "gecko_official_a", "1.0", "gecko_official_b==2.0")  # the official package pins b 2.0 …
    _wheel(wheels, "gecko_official_b", "1.0")  # … and the verified pins hold b 1.0: pip reports a conflict
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    venv = PinnedVenv(tmp_path / ".venv-official", no_deps=("gecko_official_a==1.0",),
                      pins=("gecko_official_b==1.0",), duration="about 20 s here")
    venv.ensure()
    err = capsys.readouterr().err
    assert venv.ready() and "installing 2 pinned packages (these and what they depend on); this takes about 20 s here" in err
    assert "[3/3] done in" in err and "ERROR" not in err and "conflict" not in err
    assert "dependency conflicts" in (tmp_path / ".venv-official.build.log").read_text()
    broken = PinnedVenv(tmp_path / ".venv-broken", no_deps=("gecko_official_c==1.0",), pins=())
    with pytest.raises(VenvError, match=r"(?s)exit 1.*No matching distribution found for gecko_official_c"):
        broken.ensure()
