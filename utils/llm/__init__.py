"""The one LLM client: model aliases, retries, cache, usage accounting and structured output.

Other layers import from here, not from the submodules.
"""

from utils.llm.aliases import (
    Capabilities,
    ModelSpec,
    Price,
    check_model_names,
    is_engine_name,
    is_scripted_name,
    known_model_names,
    resolve_model,
    with_capabilities,
)
from utils.llm.cache import LLMCache, cache_key
from utils.llm.client import (
    ChatResult,
    ClientConfig,
    LLMClient,
    StructuredResult,
    pydantic_check,
    schema_check,
)
from utils.llm.env import ENV_VARS, env_example, load_env
from utils.llm.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMContextOverflowError,
    LLMError,
    LLMInfrastructureError,
    LLMOutputError,
    LLMParseError,
    LLMRateLimitError,
    LLMRequestError,
    LLMSchemaError,
    LLMServerError,
    LLMTimeoutError,
    LLMUsageError,
    MissingAPIKeyError,
    UnknownModelError,
)
from utils.llm.factory import HttpBackend, create_client
from utils.llm.jsontext import clean_reply, parse_json_reply
from utils.llm.probe import (
    ModelProbeError,
    ProbeReport,
    ToolSupport,
    check_tool_support,
    probe_capabilities,
    probe_models,
)
from utils.llm.prompts import Prompt, load_prompt
from utils.llm.retry import RetryDecision, RetryPolicy, classify_error, with_retries
from utils.llm.transport import ChatTransport, LLMToolCall, OpenAITransport, RawReply
from utils.llm.transport_raw import RawHTTPTransport
from utils.llm.usage import ROLES, UsageAggregator, UsageRecord, UsageTotals

__all__ = [
    "ENV_VARS", "ROLES", "Capabilities", "ChatResult", "ChatTransport", "ClientConfig", "HttpBackend", "LLMAuthError",
    "LLMCache",
    "LLMClient", "LLMConnectionError", "LLMContextOverflowError", "LLMError", "LLMInfrastructureError", "LLMOutputError", "LLMParseError",
    "LLMRateLimitError", "LLMRequestError", "LLMSchemaError", "LLMServerError", "LLMTimeoutError", "LLMUsageError",
    "MissingAPIKeyError", "ModelProbeError", "ModelSpec", "OpenAITransport", "Price", "ProbeReport", "Prompt",
    "RawHTTPTransport", "RawReply", "RetryDecision", "RetryPolicy", "StructuredResult", "LLMToolCall", "ToolSupport",
    "UnknownModelError", "UsageAggregator", "UsageRecord", "check_tool_support", "probe_capabilities",
    "UsageTotals", "cache_key", "check_model_names", "classify_error", "clean_reply", "create_client",
    "env_example", "is_engine_name", "is_scripted_name", "known_model_names", "load_env", "load_prompt",
    "parse_json_reply", "probe_models", "pydantic_check", "resolve_model", "schema_check", "with_capabilities", "with_retries",
]
