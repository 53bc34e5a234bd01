"""The model alias table: every model name Gecko and the runners accept, in one place.

A name resolves to a `ModelSpec`: provider, base URL, key variable, capabilities and price. Forms:

- an alias from `MODELS` (`gpt-4.1-mini`, `deepseek-chat`, `qwen-plus`, …);
- `openai:<model>` for any other OpenAI model id (capabilities of the gpt-4.1 family, no price);
- `openai-compatible:<model>@<base_url>` for vLLM, Ollama, llama.cpp, the local stub or any gateway
  (`openai-compatible:<model>` alone takes the URL from `OPENAI_COMPATIBLE_BASE_URL`); capabilities may be
  declared after a `#`: `openai-compatible:qwen@http://127.0.0.1:8001/v1#json_schema,tools=off`. What is
  not declared is probed (`utils.llm.probe`) by Gecko at start-up and by the runners' preflight;
- the engines `rules` and `none`, and `scripted-*` (offline agents), which are not models.

Base URLs follow the SDK conventions: `OPENAI_BASE_URL` redirects every OpenAI alias (so
`OPENAI_BASE_URL=http://127.0.0.1:8765/v1 … --response-model gpt-4o-mini` talks to a local server),
and each other provider has its own `<PROVIDER>_BASE_URL`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from utils.llm.errors import LLMUsageError, MissingAPIKeyError, UnknownModelError
from utils.roles import ENGINE_NONE, ENGINE_RULES

SCRIPTED_PREFIX = "scripted-"
GENERIC_PREFIX = "openai-compatible:"
OPENAI_PREFIX = "openai:"
NO_KEY = "sk-no-key"
"""Sent to servers that need no key (local servers ignore it; the SDK insists on one)."""


@dataclass(frozen=True)
class Capabilities:
    """What a model accepts; the client adapts its requests to these facts."""

    tools: bool = True
    """Function calling (`tools`, `tool_choice`)."""
    json_schema: bool = False
    """`response_format={"type": "json_schema", ...}` (structured outputs)."""
    json_mode: bool = True
    """`response_format={"type": "json_object"}`."""
    temperature: bool = True
    """Whether `temperature` may be sent (reasoning models reject it)."""
    reasoning: bool = False
    """A reasoning model: may think before answering; takes `max_completion_tokens`."""


@dataclass(frozen=True)
class Price:
    """USD per one million tokens."""

    input_per_m: float
    output_per_m: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """Cost in USD of one call."""
        return (input_tokens * self.input_per_m + output_tokens * self.output_per_m) / 1_000_000


@dataclass(frozen=True)
class Provider:
    """An API family: where it lives and which variables configure it."""

    name: str
    base_url: str
    key_env: str
    base_url_env: str
    key_required: bool = True
    """Whether a key is needed at the default base URL (a redirected URL never requires one)."""
    token_param: str = "max_tokens"


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                       token_param="max_completion_tokens"),
    "deepseek": Provider("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL"),
    "qwen": Provider("qwen", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY",
                     "DASHSCOPE_BASE_URL"),
    "openai-compatible": Provider("openai-compatible", "", "OPENAI_COMPATIBLE_API_KEY",
                                  "OPENAI_COMPATIBLE_BASE_URL", key_required=False),
}


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model name."""

    name: str
    """The name as configured (alias or generic form); shown in /health and usage."""
    model: str
    """The model id sent to the API."""
    provider: str
    base_url: str
    key_env: str
    key_required: bool
    capabilities: Capabilities = field(default_factory=Capabilities)
    price: Price | None = None
    """None when we do not know the price; costs are then reported as unknown."""
    token_param: str = "max_tokens"
    """Request field for the output token limit (`max_tokens` or `max_completion_tokens`)."""
    redirected: bool = False
    """The endpoint is not the provider's own (a generic URL or a `<PROVIDER>_BASE_URL` override): its
    capabilities are not known from the alias table, and `utils.llm.probe` finds them."""
    declared: frozenset[str] = frozenset()
    """Capabilities set in the name (`#json_schema,tools=off`); never probed."""
    capability_sources: tuple[tuple[str, str], ...] = ()
    """Capability → where its value comes from: `alias table`, `declared`, `assumed`, `probed: <how>`."""
    probe_error: str | None = None
    """Why the last probe could not tell (the assumed values stand meanwhile)."""
    context_tokens: int | None = None
    """The endpoint's context window in tokens, when it says (llama.cpp's `/props`); None: not known."""
    slots: int | None = None
    """How many requests the endpoint serves at once, when it says (llama.cpp's `/props` `total_slots`); the client
    sends it no more at a time. None: not known."""

    @property
    def needs_probe(self) -> bool:
        """Whether some capability of this endpoint is neither in the alias table nor declared."""
        return self.redirected and not set(CAPABILITY_NAMES) <= self.declared

    def source_of(self, capability: str) -> str:
        """Where the value of `capability` comes from."""
        generic = self.provider == "openai-compatible"
        return dict(self.capability_sources).get(
            capability, "declared" if capability in self.declared else "assumed" if generic else "alias table")

    @property
    def endpoint(self) -> str:
        """Key for connection pools and concurrency limits: base URL plus model id."""
        return f"{self.base_url}#{self.model}"

    def api_key(self, env: Mapping[str, str] | None = None) -> str:
        """The key to send.

        Raises:
            MissingAPIKeyError: the provider needs a key and its variable is empty.
        """
        env = os.environ if env is None else env
        key = env.get(self.key_env, "")
        if key:
            return key
        if self.key_required:
            raise MissingAPIKeyError(self.name, self.key_env)
        return NO_KEY

    def public(self) -> dict[str, object]:
        """Summary for /health and result files (no secrets)."""
        public: dict[str, object] = {
            "name": self.name, "model": self.model, "provider": self.provider, "base_url": self.base_url,
            "capabilities": {k: getattr(self.capabilities, k) for k in Capabilities.__dataclass_fields__},
            "capability_sources": {k: self.source_of(k) for k in Capabilities.__dataclass_fields__},
        }
        if self.probe_error:
            public["probe_error"] = self.probe_error
        return public


_GPT = Capabilities(tools=True, json_schema=True, json_mode=True, temperature=True)
_GPT5 = Capabilities(tools=True, json_schema=True, json_mode=True, temperature=False, reasoning=True)
_CHAT_JSON = Capabilities(tools=True, json_schema=False, json_mode=True, temperature=True)


@dataclass(frozen=True)
class _Alias:
    model: str
    provider: str
    capabilities: Capabilities
    price: Price | None


# List prices in USD per 1M input/output tokens as we know them (2026-11); this is the one place to update.
# `None`: price not published to us; usage then reports tokens without a cost.
MODELS: dict[str, _Alias] = {
    "gpt-4o": _Alias("gpt-4o", "openai", _GPT, Price(2.50, 10.00)),
    "gpt-4o-mini": _Alias("gpt-4o-mini", "openai", _GPT, Price(0.15, 0.60)),
    "gpt-4.1": _Alias("gpt-4.1", "openai", _GPT, Price(2.00, 8.00)),
    "gpt-4.1-mini": _Alias("gpt-4.1-mini", "openai", _GPT, Price(0.40, 1.60)),
    "gpt-4.1-nano": _Alias("gpt-4.1-nano", "openai", _GPT, Price(0.10, 0.40)),
    "gpt-5": _Alias("gpt-5", "openai", _GPT5, Price(1.25, 10.00)),
    "gpt-5-mini": _Alias("gpt-5-mini", "openai", _GPT5, Price(0.25, 2.00)),
    "gpt-5-nano": _Alias("gpt-5-nano", "openai", _GPT5, Price(0.05, 0.40)),
    "gpt-5.5": _Alias("gpt-5.5", "openai", _GPT5, None),
    "deepseek-chat": _Alias("deepseek-chat", "deepseek", _CHAT_JSON, Price(0.27, 1.10)),
    "deepseek-reasoner": _Alias(
        "deepseek-reasoner", "deepseek",
        Capabilities(tools=False, json_schema=False, json_mode=True, temperature=False, reasoning=True),
        Price(0.55, 2.19),
    ),
    "qwen-plus": _Alias("qwen-plus", "qwen", _CHAT_JSON, Price(0.40, 1.20)),
    "qwen-max": _Alias("qwen-max", "qwen", _CHAT_JSON, Price(1.60, 6.40)),
    "qwen-turbo": _Alias("qwen-turbo", "qwen", _CHAT_JSON, Price(0.05, 0.20)),
    "qwen3-235b-a22b": _Alias("qwen3-235b-a22b", "qwen", _CHAT_JSON, None),
}

GENERIC_CAPABILITIES = Capabilities(tools=True, json_schema=False, json_mode=True, temperature=True)
"""Assumed for `openai-compatible:` until probed or declared: JSON-schema output off (servers that do not know
it may answer 4xx or 500), tools and JSON mode on."""
CAPABILITY_NAMES = ("tools", "json_schema", "json_mode", "temperature")
"""Capabilities a generic endpoint may declare in its name (`reasoning` is a property of the model)."""
_DECLARED_ON = {"", "on", "true", "yes", "1"}
_DECLARED_OFF = {"off", "false", "no", "0"}


def _declared_capabilities(name: str, text: str) -> dict[str, bool]:
    """`json_schema,tools=off` → {"json_schema": True, "tools": False}.

    Raises:
        LLMUsageError: an unknown capability or value.
    """
    declared: dict[str, bool] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        key, value = key.strip(), value.strip().lower()
        if key not in CAPABILITY_NAMES or value not in _DECLARED_ON | _DECLARED_OFF:
            raise LLMUsageError(f"{name!r}: cannot declare {part!r}; write <capability>[=on|off] with a capability "
                                f"among {', '.join(CAPABILITY_NAMES)}")
        declared[key] = value in _DECLARED_ON
    return declared


def is_engine_name(name: str) -> bool:
    """True for `rules`, `none` and `scripted-*`: names that select a non-LLM engine."""
    return name in (ENGINE_RULES, ENGINE_NONE) or name.startswith(SCRIPTED_PREFIX)


def is_scripted_name(name: str) -> bool:
    """True for `scripted-*` names, reserved for offline scripted agents."""
    return name.startswith(SCRIPTED_PREFIX)


def known_model_names(offline: Sequence[str] = ()) -> list[str]:
    """Every accepted name, for error messages and `--help`.

    Args:
        offline: The `scripted-*` agents the caller accepts (a benchmark's offline agents), listed by name.
    """
    return [ENGINE_RULES, ENGINE_NONE, *MODELS, f"{OPENAI_PREFIX}<model>",
            f"{GENERIC_PREFIX}<model>@<base_url>", *offline]


def _base_url(provider: Provider, env: Mapping[str, str]) -> tuple[str, bool]:
    """(base URL, whether it is redirected away from the provider's default)."""
    override = env.get(provider.base_url_env, "").strip()
    if override:
        return override.rstrip("/"), True
    return provider.base_url, False


def _spec(name: str, model: str, provider: Provider, base_url: str, redirected: bool,
          capabilities: Capabilities, price: Price | None, declared: Mapping[str, bool] | None = None) -> ModelSpec:
    declared = dict(declared or {})
    return ModelSpec(
        name=name, model=model, provider=provider.name, base_url=base_url, key_env=provider.key_env,
        key_required=provider.key_required and not redirected, capabilities=replace(capabilities, **declared),
        price=price, token_param=provider.token_param, redirected=redirected, declared=frozenset(declared),
    )


def resolve_model(name: str, env: Mapping[str, str] | None = None, offline: Sequence[str] = ()) -> ModelSpec:
    """Resolve a model name into a `ModelSpec`.

    Args:
        name: an alias, `openai:<model>`, or `openai-compatible:<model>[@<base_url>]`.
        env: environment to read base-URL overrides from (default: `os.environ`).
        offline: The `scripted-*` agents the caller also accepts (named in the unknown-model message).

    Raises:
        UnknownModelError: the name is not known.
        LLMUsageError: an engine name (`rules`, `none`, `scripted-*`) or an incomplete generic form.
    """
    env = os.environ if env is None else env
    name = name.strip()
    if is_engine_name(name):
        raise LLMUsageError(f"{name!r} names an engine, not a model; it needs no LLM client")
    if name in MODELS:
        alias = MODELS[name]
        provider = PROVIDERS[alias.provider]
        base_url, redirected = _base_url(provider, env)
        return _spec(name, alias.model, provider, base_url, redirected, alias.capabilities, alias.price)
    if name.startswith(OPENAI_PREFIX) and len(name) > len(OPENAI_PREFIX):
        provider = PROVIDERS["openai"]
        base_url, redirected = _base_url(provider, env)
        return _spec(name, name[len(OPENAI_PREFIX):], provider, base_url, redirected, _GPT, None)
    if name.startswith(GENERIC_PREFIX):
        provider = PROVIDERS["openai-compatible"]
        rest, _, declared = name[len(GENERIC_PREFIX):].partition("#")
        model, _, url = rest.partition("@")
        url = url.strip() or env.get(provider.base_url_env, "").strip()
        if not model or not url:
            raise LLMUsageError(
                f"{name!r}: write 'openai-compatible:<model>@<base_url>' "
                f"(or set {provider.base_url_env} and use 'openai-compatible:<model>')"
            )
        if not url.startswith(("http://", "https://")):
            raise LLMUsageError(f"{name!r}: the base URL must start with http:// or https://")
        return _spec(name, model, provider, url.strip().rstrip("/"), True, GENERIC_CAPABILITIES, None,
                     _declared_capabilities(name, declared))
    raise UnknownModelError(name, known_model_names(offline))


def with_capabilities(spec: ModelSpec, **changes: bool) -> ModelSpec:
    """A copy of `spec` with some capabilities changed (e.g. `json_schema=True` for a vLLM server)."""
    return replace(spec, capabilities=replace(spec.capabilities, **changes))


def check_model_names(names: Mapping[str, str], env: Mapping[str, str] | None = None,
                      offline: Sequence[str] = ()) -> dict[str, ModelSpec]:
    """Validate the model of every role at start-up; engines are skipped.

    Args:
        names: role → configured name.
        env: environment (default `os.environ`).
        offline: The `scripted-*` agents the caller also accepts (named in the unknown-model message).

    Returns:
        role → resolved spec, for the roles that use an LLM.

    Raises:
        UnknownModelError, MissingAPIKeyError, LLMUsageError: for the first bad name.
    """
    specs: dict[str, ModelSpec] = {}
    for role, name in names.items():
        if is_engine_name(name):
            continue
        spec = resolve_model(name, env, offline)
        spec.api_key(env)
        specs[role] = spec
    return specs
