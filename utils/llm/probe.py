"""What a model's endpoint can do, and whether it answers at all, found by asking it.

```
probe_capabilities(client, spec)   GET <root>/props (llama.cpp: chat-template caps; the server constrains
                                   json_schema; its context window and slots) → else one 1-token request with a
                                   json_schema response format
check_tool_support(client, model)  capability facts (alias table, declaration, /props) → else one request that
                                   forces a call of a probe tool and must come back with a tool call
probe_models(client, models)       the runners' preflight: per distinct model (each judge of a panel once), its
                                   capabilities, the tool support of a tool-using role, and one real tiny request
                                   (the tool request above, or `Reply with OK.`): the first failure is one
                                   actionable line (`ModelProbeError`) before any task runs
```

Every probe request goes through `_ask` (usage role `probe`: capped, accounted, never cached). Only endpoints
whose capabilities are not known (`ModelSpec.needs_probe`: generic URLs and redirected base URLs) have them
probed, and only what their name does not declare. A capability probe that cannot tell (the endpoint is down)
keeps the assumed values and says why (`ModelSpec.probe_error`); Gecko shows it in `/health`.

A name that resolves and a key that is set say nothing about whether the endpoint answers, knows the model or
takes the key, so the preflight always sends one request per model; what its failure says:

| failure                                   | message says                                          |
|-------------------------------------------|-------------------------------------------------------|
| unknown name, key variable empty          | the alias table's own message (set KEY / known names) |
| connection refused, DNS, timeout, 5xx     | the endpoint is unreachable: start it / check the URL |
| 401 / 403                                 | the key was refused: which variable to fix            |
| 404, or 400 naming the model              | the endpoint does not serve that model                |
| tools refused (400) or ignored (text back)| the role needs tool calling: how to serve it          |
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import httpx

from utils.llm.aliases import Capabilities, ModelSpec, is_engine_name
from utils.llm.errors import LLMAuthError, LLMError, LLMInfrastructureError, LLMRequestError, LLMServerError
from utils.roles import PROBE, call_role, panel_models

if TYPE_CHECKING:
    from utils.llm.client import ChatResult, LLMClient

PROBE_TIMEOUT_S = 20.0
"""Total time of one capability or tool probe (each of its requests is bounded by it)."""
PREFLIGHT_TIMEOUT_S = 60.0
"""Bound on one model's preflight request, retries included (a cold local server may take a while to load)."""
PROPS_TIMEOUT_S = 5.0
PROBE_TOOL = "gecko_probe"
_PROBE_TOOLS = [{"type": "function", "function": {
    "name": PROBE_TOOL, "description": "Report that tools work.",
    "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}]
_JSON_SCHEMA_FORMAT = {"type": "json_schema",
                       "json_schema": {"name": "gecko_probe", "schema": {"type": "object"}, "strict": False}}
_ASKS: dict[str, dict[str, Any]] = {
    "plain": {"messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 8},
    "json_schema": {"messages": [{"role": "user", "content": "Reply with {}."}], "max_tokens": 1,
                    "response_format": _JSON_SCHEMA_FORMAT},
    "tools": {"messages": [{"role": "user", "content": f"Call the function {PROBE_TOOL} with ok set to true."}],
              "max_tokens": 64, "tools": _PROBE_TOOLS,
              "tool_choice": {"type": "function", "function": {"name": PROBE_TOOL}}},
}
"""The three probe requests: does the model answer, is json_schema accepted, are tools called."""
_TOOLS_HINT = ("Serve it with a tool-capable chat template (`python -m utils.local_model serve --model FILE.gguf` "
               "ships one for the Gemma 3 and ChatML families; llama.cpp: --jinja), or use a model whose endpoint "
               "supports tools")


class ModelProbeError(LLMError):
    """A configured model failed its preflight; the message says what to fix."""


async def _ask(client: LLMClient, spec: ModelSpec, kind: str, *, timeout_s: float, max_attempts: int | None = None
               ) -> ChatResult:
    """Send probe request `kind` (`_ASKS`) to `spec`'s endpoint, bounded by `timeout_s` with its retries (default: the
    client's retry policy)."""
    ask = dict(_ASKS[kind])
    messages = ask.pop("messages")
    return await client.chat(spec, list(messages), role=PROBE.name, use_cache=False, max_attempts=max_attempts,
                             deadline_s=timeout_s, **ask)


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
    context, slots = endpoint_limits(props) if props is not None else (spec.context_tokens, spec.slots)
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
            await _ask(client, spec, "json_schema", timeout_s=timeout_s, max_attempts=1)
            found["json_schema"], sources["json_schema"] = True, "probed: a json_schema request was accepted"
        except (LLMRequestError, LLMServerError) as exc:
            found["json_schema"] = False
            sources["json_schema"] = f"probed: a json_schema request was refused ({_short(exc)})"
        except LLMInfrastructureError as exc:
            error = f"json_schema not probed, the endpoint did not answer: {_short(exc)}"
    return replace(spec, capabilities=replace(spec.capabilities, **found),
                   capability_sources=tuple(sources.items()), probe_error=error, context_tokens=context, slots=slots)


def endpoint_limits(props: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The context window (`default_generation_settings.n_ctx`) and the slots (`total_slots`) of a llama.cpp
    server's `/props` (None where it does not say)."""
    settings = props.get("default_generation_settings")
    context = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    slots = props.get("total_slots")
    return (context if isinstance(context, int) and context > 0 else None,
            slots if isinstance(slots, int) and slots > 0 else None)


@dataclass(frozen=True)
class ToolSupport:
    """Whether a model's endpoint honours `tools`, and how that was found."""

    model: str
    supported: bool
    how: str
    """`alias table`, `declared`, `/props`, or `probe request`."""
    detail: str
    """One line for the preflight's message."""
    reply: ChatResult | None = field(default=None, compare=False)
    """The probe request's answer when one was sent (the preflight needs no other request then)."""


async def check_tool_support(client: LLMClient, model: str, *, timeout_s: float = PROBE_TIMEOUT_S) -> ToolSupport:
    """Whether `model` gets `tools` through to the model (a server whose chat template lacks tools drops them
    silently: every call of the agent then comes back as text).

    Facts first: a capability from the alias table or declared in the name, then llama.cpp's `/props`
    (`chat_template_caps.supports_tools`); else one request that forces a call of a probe tool and must
    come back with a structured tool call.

    Raises:
        LLMInfrastructureError: the endpoint could not be reached or refused the key (a preflight failure of its
            own).
        LLMRequestError: 404: the endpoint does not serve that model.
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
    try:
        result = await _ask(client, spec, "tools", timeout_s=timeout_s, max_attempts=2)
    except LLMRequestError as exc:
        if exc.status == 404:
            raise
        return ToolSupport(spec.name, False, "probe request",
                           f"{spec.name} rejected a request with a tool definition: {_short(exc)}")
    if result.tool_calls:
        return ToolSupport(spec.name, True, "probe request",
                           f"{spec.name}: a request forcing a call of {PROBE_TOOL} came back with a tool call",
                           result)
    return ToolSupport(spec.name, False, "probe request", (
        f"{spec.name}: asked to call {PROBE_TOOL} (tool_choice naming it), the endpoint answered with text "
        f"{(result.text or '')[:80]!r}: it ignores `tools`"), result)


@dataclass(frozen=True)
class ProbeReport:
    """What one model's preflight found (recorded in the run's `config.json`)."""

    model: str
    roles: tuple[str, ...]
    capabilities: Capabilities
    """The model's capabilities, probed where they were not known."""
    tools: str | None
    """How tool support was established for a tool-using role (`ToolSupport.how`); None: no role needs tools."""
    served_model: str | None
    """The model name the endpoint reported."""
    latency_s: float
    context_tokens: int | None = None
    """The endpoint's context window, when it says (`ModelSpec.context_tokens`)."""
    slots: int | None = None
    """How many requests the endpoint serves at once, when it says (`ModelSpec.slots`)."""

    def public(self) -> dict[str, Any]:
        """JSON form."""
        return {"model": self.model, "roles": list(self.roles), "capabilities": asdict(self.capabilities),
                "tools": self.tools, "served_model": self.served_model, "latency_s": round(self.latency_s, 3),
                "context_tokens": self.context_tokens, "slots": self.slots}


async def probe_models(client: LLMClient, models: Mapping[str, str], *, timeout_s: float = PREFLIGHT_TIMEOUT_S
                       ) -> list[ProbeReport]:
    """The runners' preflight: every configured model (each judge of a panel `a,b,c`) checked by one real tiny
    request, and a tool-using role's model checked for tool calling (see the module docstring).

    Args:
        client: The run's LLM client (its cache is bypassed).
        models: Usage role (`utils.roles.CALL_ROLES` name) → model name or panel; engines are skipped.
        timeout_s: Bound on each model's request (the client's retries included).

    Returns:
        One report per distinct model.

    Raises:
        ModelProbeError: The first model that failed, with what to fix.
        UnknownModelError, MissingAPIKeyError: A bad name or an empty key variable (no request is sent).
    """
    by_model: dict[str, list[str]] = {}
    for role, names in models.items():
        for name in panel_models(names):
            if not is_engine_name(name):
                by_model.setdefault(name, []).append(role)
    return [await _probe_model(client, name, tuple(roles), timeout_s) for name, roles in by_model.items()]


async def _probe_model(client: LLMClient, name: str, roles: tuple[str, ...], timeout_s: float) -> ProbeReport:
    """`probe_models` for one model used by `roles`."""
    uses_tools = any((known := call_role(role)) is not None and known.uses_tools for role in roles)
    started = time.perf_counter()
    spec = await client.probe(name)
    reply: ChatResult | None = None
    how = None
    try:
        if spec.probe_error is not None:  # the capability probe got no answer: why (or does it answer now)?
            reply = await _ask(client, spec, "plain", timeout_s=timeout_s)
        if uses_tools:
            support = await check_tool_support(client, name, timeout_s=timeout_s)
            if not support.supported:
                raise ModelProbeError(f"model {name!r} ({', '.join(roles)}) cannot call tools: {support.detail}. "
                                      f"{_TOOLS_HINT}")
            how, reply = support.how, support.reply or reply
        if reply is None:
            reply = await _ask(client, spec, "tools" if uses_tools else "plain", timeout_s=timeout_s)
    except (LLMRequestError, LLMInfrastructureError) as exc:
        raise ModelProbeError(_describe(name, roles, uses_tools, spec.endpoint, exc)) from exc
    probed = client.spec(name)
    return ProbeReport(name, roles, probed.capabilities, how, reply.model, time.perf_counter() - started,
                       probed.context_tokens, probed.slots)


def _describe(name: str, roles: tuple[str, ...], tools: bool, endpoint: str, exc: LLMError) -> str:
    """One actionable line for a failed preflight request."""
    who = f"model {name!r} ({', '.join(roles)}) at {endpoint}"
    if isinstance(exc, LLMAuthError):
        return f"{who} refused the API key ({_short(exc)}); check the key variable of that model"
    if isinstance(exc, LLMInfrastructureError):
        return f"{who} is unreachable ({_short(exc)}); start the server or check the URL and the network"
    text = _short(exc)
    if isinstance(exc, LLMRequestError) and exc.status == 404 or "model" in text.lower() and not tools:
        return f"{who} rejected the request ({text}); is the model name right for that endpoint?"
    if tools:
        return (f"{who} rejected a request with a tool definition ({text}); the role needs tool calling. "
                f"{_TOOLS_HINT}, or check the model name")
    return f"{who} rejected the request ({text})"


def _short(exc: Exception, limit: int = 160) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["PREFLIGHT_TIMEOUT_S", "PROBE_TIMEOUT_S", "ModelProbeError", "ProbeReport", "ToolSupport",
           "check_tool_support", "endpoint_limits", "fetch_props", "probe_capabilities", "probe_models", "props_url"]
