"""The one place the converter touches the LLM layer: an `InferFn` backed by `utils.llm`.

Imported only when a model is requested (`--model`), so the converter works without it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gecko.convert.infer import InferFn
from utils.roles import CONVERTER

ROLE = CONVERTER.name
SCHEMA_NAME = "gecko_response_schema"


def llm_infer(model: str) -> InferFn:
    """An `InferFn` that asks `model` (an alias known to `utils.llm`) for structured JSON.

    Raises:
        utils.llm.UnknownModelError: `model` is not a known alias (checked here, before any call).
    """
    from utils.llm import LLMClient, load_env

    load_env()
    LLMClient().spec(model)

    def infer(prompt: str, schema: dict[str, Any]) -> dict[str, Any]:
        async def ask() -> dict[str, Any]:
            client = LLMClient()
            try:
                result = await client.structured_json(
                    model, [{"role": "user", "content": prompt}], schema, role=ROLE, name=SCHEMA_NAME
                )
            finally:
                await client.aclose()
            return result.value

        return asyncio.run(ask())

    return infer
