"""Start llama.cpp's OpenAI-compatible server (the prebuilt `xllamacpp` wheel) with safe settings.

- bound to 127.0.0.1 by default; an optional API key;
- **one thread** for generation and one for prompt processing: llama.cpp's threads wait for each other at
  every step, so on a shared 2-core machine a second thread that gets descheduled slows every token by
  100× (shared research note on local LLMs);
- a tool-capable chat template (`templates/`) where the model's own lacks tools: llama.cpp otherwise
  drops `tools` from every request without a word;
- an output ceiling per request (`n_predict`) on top of the callers' own caps;
- Jinja templates on (`use_jinja`), so tool calls come back as structured `tool_calls`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from utils.local_model.gguf import GGUFInfo, read_gguf

TEMPLATES = ("gemma", "chatml")
"""Tool-capable chat templates shipped in `templates/` (one per supported model family)."""
XLLAMACPP_PIN = "xllamacpp==2026.10.11549"


class LocalModelError(RuntimeError):
    """The server cannot be started as asked (the message says why and what to do)."""


def template_text(name: str) -> str:
    """A shipped template by name (`gemma`, `chatml`)."""
    return resources.files("utils.local_model").joinpath("templates", f"{name}.jinja").read_text(encoding="utf-8")


def family_of(info: GGUFInfo) -> str | None:
    """The shipped template that fits the model, or None when no shipped one does."""
    if info.architecture.startswith("gemma"):
        return "gemma"
    if info.chat_template and "<|im_start|>" in info.chat_template:
        return "chatml"
    return None


def choose_template(info: GGUFInfo, choice: str = "auto") -> tuple[str | None, str]:
    """(template text, or None for the model's own; what was chosen, for the banner).

    `auto`: the model's own template when it renders tools, else the shipped one of its family.

    Raises:
        LocalModelError: no tool-capable template for this model, or an unreadable template file.
    """
    if choice == "bundled":
        return None, "the model's own"
    if choice in TEMPLATES:
        return template_text(choice), f"{choice} (Gecko's, with tool calls)"
    if choice != "auto":
        path = Path(choice)
        try:
            return path.read_text(encoding="utf-8"), str(path)
        except OSError as exc:
            raise LocalModelError(f"cannot read the chat template {path}: {exc}") from exc
    if info.template_supports_tools:
        return None, "the model's own (it renders tools)"
    family = family_of(info)
    if family is None:
        raise LocalModelError(
            f"{info.path.name} ({info.architecture or 'unknown architecture'}) has no chat template that renders "
            f"tools, and none of Gecko's ({', '.join(TEMPLATES)}) is known to fit it: pass --template with one of "
            "them, or a Jinja file that renders `tools` and emits <tool_call>{…}</tool_call>")
    return template_text(family), f"{family} (Gecko's, with tool calls)"


@dataclass(frozen=True)
class ServeConfig:
    """How to run the server."""

    model: Path
    alias: str
    host: str = "127.0.0.1"
    port: int = 8090
    """0: any free port (the banner says which)."""
    context: int = 8192
    """Context window (tokens)."""
    threads: int = 1
    """Threads for generation and for prompt processing (keep 1 on a shared machine)."""
    max_tokens: int = 1024
    """Ceiling on the tokens of one reply, whatever the request asks."""
    template: str = "auto"
    """`auto`, `bundled`, a shipped template name, or a Jinja file."""
    api_key: str | None = None
    metrics: bool = False
    """Serve llama.cpp's Prometheus `/metrics` (token counters; tests compare them with Gecko's usage)."""


def _xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise LocalModelError(
            f"the local model server needs the `local` extra: pip install -e '.[local]' (or: pip install {XLLAMACPP_PIN})"
        ) from exc
    return xllamacpp


def start(config: ServeConfig) -> tuple[Any, str, GGUFInfo, str]:
    """Start the server in this process; returns (server handle, base URL `http://host:port/v1`, model
    metadata, template description). The server stops when the handle is dropped or the process ends.

    Raises:
        LocalModelError: xllamacpp missing, no fitting template, or the server did not start.
    """
    if not config.model.is_file():
        raise LocalModelError(f"no model file at {config.model}")
    info = read_gguf(config.model)
    text, chosen = choose_template(info, config.template)
    xllamacpp = _xllamacpp()
    params = xllamacpp.CommonParams()
    params.model.path = str(config.model)
    params.model_alias = {config.alias}
    params.hostnames = [config.host]
    params.port = config.port
    params.n_ctx = config.context
    params.n_parallel = 1
    params.n_predict = config.max_tokens
    params.use_jinja = True
    params.cpuparams.n_threads = config.threads
    params.cpuparams_batch.n_threads = config.threads
    params.verbosity = 1
    if text is not None:
        params.chat_template = text
    if config.api_key:
        params.api_keys = [config.api_key]
    params.endpoint_metrics = config.metrics
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:
        raise LocalModelError(f"llama.cpp's server did not start on {config.host}:{config.port}: {exc}") from exc
    return server, f"{server.listening_address}/v1", info, chosen


def wait_ready(base_url: str, api_key: str | None = None, timeout: float = 120.0) -> None:
    """Wait until the server answers `GET /health` with 200 (it answers 503 while the model loads).

    Raises:
        LocalModelError: not ready within `timeout`.
    """
    import httpx

    url = base_url.removesuffix("/v1") + "/health"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, headers=headers, timeout=5.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise LocalModelError(f"the server at {base_url} did not become ready within {timeout:.0f}s")


def gecko_alias(alias: str, base_url: str) -> str:
    """The model name Gecko and the runners take for this server."""
    return f"openai-compatible:{alias}@{base_url}"
