"""Build Gecko's mock toolkits for tau2 from the domain tools: `benchmarks/taubench/toolkits/<domain>.json` (shipped
with the package), and for a dual-control domain the user's tools as a second toolkit, `<domain>_user.json` (telecom:
the phone's tools the user simulator calls; `x-taubench.side` is `user`).

The tools' signatures and docstrings become the operations (request schemas, descriptions), their
return types the response schemas, and their declared kinds `x-gecko-access`. This is the only
module of `benchmarks.taubench` that imports `gecko` (the converter), and only when it runs.

Usage:
    .venv/bin/python -m benchmarks.taubench.mock_toolkits            # writes both documents
    .venv/bin/python -m benchmarks.taubench.mock_toolkits --check    # fails if they are out of date
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from benchmarks.taubench.domains import DOMAINS, get_domain
from benchmarks.taubench.loader import DEFAULT_TASK_SET, DataStore
from benchmarks.taubench.tasks import TaskSet

MOCK_DIR = Path(str(files("benchmarks.taubench").joinpath("toolkits")))
"""Where the mock toolkits are written (and where Gecko and the agent's catalog read them)."""
TITLES = {
    "airline": "tau2 Airline Tools",
    "retail": "tau2 Retail Tools",
    "telecom": "tau2 Telecom Tools",
    "telecom_user": "tau2 Telecom User Tools",
}
DESCRIPTIONS = {
    "airline": "Customer-service tools of the tau2-bench airline domain: users, reservations and flights.",
    "retail": "Customer-service tools of the tau2-bench retail domain: users, orders and products.",
    "telecom": "Customer-service tools of the tau2-bench telecom domain: customers, lines, bills, plans and devices.",
    "telecom_user": "The customer's own phone in the tau2-bench telecom domain (dual control): settings and checks "
    "the user simulator runs itself.",
}
USER_SUFFIX = "_user"
"""A dual-control domain's user toolkit is `<domain>_user`."""


def toolkit_names() -> list[str]:
    """Every mock toolkit: one per domain, plus `<domain>_user` for a dual-control domain."""
    names = []
    for domain, spec in DOMAINS.items():
        names.append(domain)
        if spec.dual_control:
            names.append(domain + USER_SUFFIX)
    return names


def build_openapi(
    domain: str, task_set: TaskSet = DEFAULT_TASK_SET, store: DataStore | None = None, *, side: str = "assistant"
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a domain's tools.

    Args:
        domain: `airline`, `retail` or `telecom`.
        task_set: which tool list (retail v1 has `get_item_details`).
        store: data store used to record the data version (a new one if None).
        side: `assistant` (the agent's tools) or `user` (the user's own tools of a dual-control domain).

    Returns:
        The document, validated by the converter.

    Raises:
        ValueError: for `side="user"` in a domain whose user has no tools.
    """
    from gecko.convert import from_callables

    spec = get_domain(domain)
    kit = spec.tools if side == "assistant" else spec.user_tools
    if kit is None:
        raise ValueError(f"{domain} has no user tools")
    tools = kit(None, task_set)  # signatures and docstrings only: no DB needed
    access = {name: tools.kind(name) for name in tools.names()}
    store = store or DataStore()
    name = domain if side == "assistant" else domain + USER_SUFFIX
    marker = {"domain": domain, "task_set": task_set, "data_version": store.data_version(domain, task_set)}
    if side == "user":
        marker["side"] = "user"
    return from_callables(
        tools.callables(),
        title=TITLES[name],
        description=DESCRIPTIONS[name],
        access=access,
        info_extensions={"x-taubench": marker},
    )


def _build(name: str, task_set: TaskSet, store: DataStore) -> dict[str, Any]:
    if name.endswith(USER_SUFFIX):
        return build_openapi(name.removesuffix(USER_SUFFIX), task_set, store, side="user")
    return build_openapi(name, task_set, store)


def write_openapi(out_dir: Path = MOCK_DIR, task_set: TaskSet = DEFAULT_TASK_SET) -> list[Path]:
    """Write `<toolkit>.json` for every mock toolkit (`toolkit_names()`); returns the paths written."""
    from gecko.convert import write_document

    store = DataStore()
    paths = []
    for name in toolkit_names():
        path = out_dir / f"{name}.json"
        write_document(_build(name, task_set, store), path)
        paths.append(path)
    return paths


def stale_documents(out_dir: Path = MOCK_DIR, task_set: TaskSet = DEFAULT_TASK_SET) -> list[Path]:
    """Documents under `out_dir` that differ from what `write_openapi` would write."""
    from gecko.convert import dump_document

    store = DataStore()
    stale = []
    for name in toolkit_names():
        path = out_dir / f"{name}.json"
        expected = dump_document(_build(name, task_set, store))
        if not path.exists() or path.read_text(encoding="utf-8") != expected:
            stale.append(path)
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the tau2 mock toolkits (OpenAPI) from the domain tools.")
    parser.add_argument("--out-dir", type=Path, default=MOCK_DIR)
    parser.add_argument("--task-set", choices=("v1", "v0"), default=DEFAULT_TASK_SET)
    parser.add_argument("--check", action="store_true", help="exit 1 if a document is missing or out of date")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_documents(args.out_dir, args.task_set)
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    for path in write_openapi(args.out_dir, args.task_set):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
