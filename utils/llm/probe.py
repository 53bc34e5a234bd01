"""What an endpoint can do, found by asking it: capabilities of generic endpoints, and tool support.

```
probe_capabilities(client, spec)   GET <root>/props (llama.cpp: chat-template caps; the server constrains
                                   json_schema) → else one 1-token request with a json_schema response format
check_tool_support(client, model)  capability facts (alias table, declaration, /props) → else one request that
                                   forces a call of a probe tool and must come back with a tool call
```

Only endpoints whose capabilities are not known (`ModelSpec.needs_probe`: generic URLs and redirected
base URLs) are probed, and only what their name does not declare. Probe requests are LLM calls of the
usage role `probe`: capped, accounted, never cached. A probe that cannot tell (the endpoint is down)
keeps the assumed values and says why (`ModelSpec.probe_error`); Gecko shows it in `/health`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import httpx

from utils.llm.aliases import ModelSpec
from utils.llm.errors import LLMInfrastructureError, LLMRequestError, LLMServerError
from utils.roles import PROBE

if TYPE_CHECKING:
    from utils.llm.client import LLMClient

PROBE_TIMEOUT_S = 20.0
"""Total time of one probe (each of its requests is bounded by it)."""
PROPS_TIMEOUT_S = 5.0
PROBE_TOOL = "gecko_probe"
_PROBE_TOOLS = [{"type": "function", "function": {
    "name": PROBE_TOOL, "description": "Report that tools work.",
    "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}]
_JSON_SCHEMA_FORMAT = {"type": "json_schema",
                       "json_schema": {"name": "gecko_probe", "schema": {"type": "object"}, "strict": False}}


def props_url(base_url: str) -> str:
    """llama.cpp's `/props` for an OpenAI base URL (`http://host:port/v1` → `http://host:port/props`)."""
    root = base_url.rstrip("/")
    return (root[: -len("/v1")] if root.endswith("/v1") else root) + "/props"


async def fetch_props(spec: ModelSpec, api_key: str, timeout_s: float = PROPS_TIMEOUT_S) -> dict[str, Any] | None:
    """llama.cpp's server properties, or None when the endpoint has no such page (not llama.cpp, or down)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as http:
            reply = await http.get(props_url(spec.base_url), headers=headers)
        body = reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) and "chat_template_caps" in body else None


async def probe_capabilities(client: LLMClient, spec: ModelSpec, *, timeout_s: float = PROBE_TIMEOUT_S) -> ModelSpec:
    """`spec` with the capabilities it does not declare found out (see the module docstring).

    Raises:
        MissingAPIKeyError: the endpoint needs a key that is not set.
    """
    if not spec.needs_probe:
        return spec
    found: dict[str, bool] = {}
    sources: dict[str, str] = {}
    props = await fetch_props(spec, spec.api_key(client.env), min(timeout_s, PROPS_TIMEOUT_S))
    if props is not None:
        caps = props.get("chat_template_caps") or {}
        if "tools" not in spec.declared and "supports_tools" in caps:
            found["tools"] = bool(caps["supports_tools"])
            sources["tools"] = "probed: /props chat_template_caps.supports_tools"
        if "json_schema" not in spec.declared:
            found["json_schema"] = True
            sources["json_schema"] = "probed: llama.cpp server (/props), which constrains json_schema output"
    error = None
    if "json_schema" not in spec.declared and "json_schema" not in found:
        try:
            await client.chat(spec, [{"role": "user", "content": "Reply with {}."}], role=PROBE.name, max_tokens=1,
                              response_format=_JSON_SCHEMA_FORMAT, use_cache=False, max_attempts=1,
                              deadline_s=timeout_s)
            found["json_schema"], sources["json_schema"] = True, "probed: a json_schema request was accepted"
        except (LLMRequestError, LLMServerError) as exc:
            found["json_schema"] = False
            sources["json_schema"] = f"probed: a json_schema request was refused ({_short(exc)})"
        except LLMInfrastructureError as exc:
            error = f"json_schema not probed, the endpoint did not answer: {_short(exc)}"
    return replace(spec, capabilities=replace(spec.capabilities, **found),
                   capability_sources=tuple(sources.items()), probe_error=error)


@dataclass(frozen=True)
class ToolSupport:
    """Whether a model's endpoint honours `tools`, and how that was found."""

    model: str
    supported: bool
    how: str
    """`alias table`, `declared`, `/props`, or `probe request`."""
    detail: str
    """One line for the preflight's message."""


async def check_tool_support(client: LLMClient, model: str, *, timeout_s: float = PROBE_TIMEOUT_S) -> ToolSupport:
    """Whether `model` gets `tools` through to the model (a server whose chat template lacks tools drops them
    silently: every call of the agent then comes back as text).

    Facts first: a capability from the alias table or declared in the name, then llama.cpp's `/props`
    (`chat_template_caps.supports_tools`); else one request that forces a call of a probe tool and must
    come back with a structured tool call.

    Raises:
        LLMInfrastructureError: the endpoint could not be reached (a preflight failure of its own).
        LLMUsageError: bad model name or missing key.
    """
    spec = await client.probe(model)
    source = spec.source_of("tools")
    if not spec.capabilities.tools:
        detail = (f"{spec.name}: the chat template of the server at {spec.base_url} does not support tools "
                  "(/props chat_template_caps.supports_tools is false), so the server drops them from every request"
                  if source.startswith("probed") else f"{spec.name} does not support tool calls ({source})")
        return ToolSupport(spec.name, False, "/props" if source.startswith("probed") else source, detail)
    if source.startswith("probed"):
        return ToolSupport(spec.name, True, "/props", f"{spec.name}: the server's chat template supports tools")
    if not spec.redirected or source == "declared":
        return ToolSupport(spec.name, True, source, f"{spec.name}: tools supported ({source})")
    messages = [{"role": "user", "content": f"Call the function {PROBE_TOOL} with ok set to true."}]
    choice = {"type": "function", "function": {"name": PROBE_TOOL}}
    try:
        result = await client.chat(spec, messages, role=PROBE.name, tools=_PROBE_TOOLS, tool_choice=choice,
                                   max_tokens=64, use_cache=False, max_attempts=2, deadline_s=timeout_s)
    except LLMRequestError as exc:
        return ToolSupport(spec.name, False, "probe request", f"{spec.name} refused a request with tools: {_short(exc)}")
    if result.tool_calls:
        return ToolSupport(spec.name, True, "probe request",
                           f"{spec.name}: a request forcing a call of {PROBE_TOOL} came back with a tool call")
    return ToolSupport(spec.name, False, "probe request", (
        f"{spec.name}: asked to call {PROBE_TOOL} (tool_choice naming it), the endpoint answered with text "
        f"{(result.text or '')[:80]!r}: it ignores `tools`"))


def _short(exc: Exception, limit: int = 160) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["PROBE_TIMEOUT_S", "ToolSupport", "check_tool_support", "fetch_props", "probe_capabilities", "props_url"]
