"""The one settings object. Sources in order of priority: CLI flags, `GECKO_*` env vars, `.env`, defaults.

CLIs build a `Settings` with their flags as keyword arguments (`Settings(**flags)`); pydantic-settings
fills the rest from the environment and `.env`. Library code receives the object; it never reads env vars.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from utils.paths import EXAMPLE_TOOLKITS_DIR, default_state_dir

ENGINE_RULES = "rules"
ENGINE_NONE = "none"
MiB = 1024 * 1024


class Settings(BaseSettings):
    """Configuration of the Gecko server and the runners that talk to it."""

    model_config = SettingsConfigDict(
        env_prefix="GECKO_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    schemas_dirs: list[Path] = Field(default_factory=lambda: [EXAMPLE_TOOLKITS_DIR])
    """Directories of OpenAPI documents, one toolkit per file; earlier directories win on name clashes."""
    skip_invalid: bool = False
    """Log and skip documents that fail validation instead of refusing to start."""
    strict_validation: bool = False
    """openapi-spec-validator on every document; by default documents over 300 operations get the fast check."""
    host: str = "127.0.0.1"
    """Bind address. Loopback by default; set 0.0.0.0 deliberately to expose the server."""
    port: int = Field(8000, ge=0, le=65535)
    workers: int = Field(2, ge=1, le=64)
    """Number of uvicorn worker processes sharing the port."""
    response_model: str = ENGINE_RULES
    """Engine of the response synthesizer: `rules` or an LLM alias."""
    state_model: str = ENGINE_RULES
    """Engine of the task-state updater: `rules`, `none` (no state updates) or an LLM alias."""
    validation_model: str = ENGINE_RULES
    """Engine of the semantic validator: `rules`/`none` (syntactic checks only) or an LLM alias."""
    judge_model: str = ENGINE_RULES
    """Engine of checklist generation and judging: `rules` (gating judge) or an LLM alias."""
    store: str = "sqlite"
    """Session store: `memory`, `sqlite` (under the state dir), `sqlite:PATH`, or `redis://host:port/db`."""
    session_ttl: float = Field(24 * 3600.0, gt=0)
    """Seconds of inactivity after which a session expires."""
    api_key: SecretStr | None = None
    """When set, every request needs `Authorization: Bearer <key>` (except `GET /health`)."""
    log_level: Literal["critical", "error", "warning", "info", "debug", "trace"] = "info"
    max_body_bytes: int = Field(1 * MiB, gt=0)
    """Largest accepted request body; larger bodies get 413."""
    state_dir: Path = Field(default_factory=default_state_dir)
    """Where the SQLite session store, the LLM cache and the toolkit validation cache live."""
    history_limit: int = Field(1000, ge=0)
    """Calls kept in a session's history (oldest dropped first)."""
    llm_cache: bool = True
    """Content-addressed cache of LLM replies (temperature 0 only); `--no-cache` disables it."""
    llm_cache_path: Path | None = None
    """SQLite file of the LLM cache (default `state_dir/llm_cache.db`)."""
    llm_timeout_s: float = Field(60.0, gt=0)
    """Timeout of one LLM request; timeouts are retried, then reported as infrastructure failures."""
    llm_max_attempts: int = Field(4, ge=1, le=20)
    """Attempts per LLM request (429/5xx/timeouts/connection errors are retried with back-off)."""
    llm_max_concurrency: int = Field(256, ge=1)
    """Concurrent LLM requests per worker and endpoint."""
    llm_http_backend: Literal["auto", "aiohttp", "httpx", "raw"] = "auto"
    """HTTP stack under the LLM client: `auto`/`aiohttp` (SDK over aiohttp), `httpx` (the SDK's own), `raw` (SDK-free, fastest)."""
    gecko_url: str = ""
    """Base URL runners use to reach Gecko; defaults to http://{host}:{port}."""

    @field_validator("schemas_dirs", mode="before")
    @classmethod
    def _split_dirs(cls, value: object) -> object:
        if isinstance(value, str):
            return [part for part in value.split(",") if part.strip()]
        return value

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
        if not self.gecko_url:
            host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
            self.gecko_url = f"http://{host}:{self.port}"
        return self

    def sqlite_path(self) -> Path:
        """Path of the SQLite session DB (only meaningful for sqlite stores)."""
        if self.store.startswith("sqlite:"):
            return Path(self.store.split(":", 1)[1]).expanduser()
        return self.state_dir / "sessions.db"

    def role_models(self) -> dict[str, str]:
        """Engine or model alias of each server role."""
        return {
            "validator": self.validation_model,
            "responder": self.response_model,
            "state": self.state_model,
            "judge": self.judge_model,
        }
