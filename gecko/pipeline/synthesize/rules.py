"""Rules response synthesis: a schema-valid response, deterministic per (session, tool, arguments)."""

from __future__ import annotations

from typing import Any

from gecko.pipeline.stages import CallContext, Synthesis
from gecko.toolkits.model import Operation
from utils.jsonutil import content_hash
from utils.roles import ENGINE_RULES
from utils.schema.instance import SchemaCache, UnsatisfiableSchema, generate_instance

NO_SCHEMA_RESPONSE = {"status": "ok"}
"""What an operation without a (JSON) response schema returns."""


def synthesize_rules(operation: Operation, arguments: dict[str, Any], seed: str,
                     cache: SchemaCache | None = None) -> Any:
    """A response that validates against the operation's response schema.

    Raises:
        UnsatisfiableSchema: no attempt produced a valid instance.
    """
    if operation.response_schema is None or operation.response_validator is None:
        return dict(NO_SCHEMA_RESPONSE)
    try:
        return generate_instance(operation.response_schema, seed, arguments,
                                 check=operation.response_is_valid, cache=cache)
    except UnsatisfiableSchema as exc:
        raise UnsatisfiableSchema(f"response schema of {operation.tool_name} could not be satisfied: {exc}") from exc


class RulesSynthesizer:
    """Deterministic synthesizer; ids derive from a hash of session, tool and canonical arguments."""

    engine = ENGINE_RULES
    needs_recent_calls = False

    def __init__(self) -> None:
        self._cache = SchemaCache()
        """Compiled sub-schema checks, reused across calls (schemas live as long as the process)."""

    async def synthesize(self, ctx: CallContext) -> Synthesis:
        seed = content_hash(ctx.session_id, ctx.operation.tool_name, ctx.arguments)
        body = synthesize_rules(ctx.operation, ctx.arguments, seed, self._cache)
        return Synthesis(body=body, engine=self.engine)
