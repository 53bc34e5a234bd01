"""Rules response synthesis: a schema-valid response, deterministic per (session, tool, arguments)."""

from __future__ import annotations

from typing import Any

from gecko.pipeline.stages import CallContext, Synthesis
from gecko.pipeline.synthesize.generator import InstanceGenerator, UnsatisfiableSchema
from gecko.toolkits.model import Operation
from utils.jsonutil import content_hash
from utils.roles import ENGINE_RULES

NO_SCHEMA_RESPONSE = {"status": "ok"}
"""What an operation without a (JSON) response schema returns."""
ATTEMPTS = 8


def synthesize_rules(operation: Operation, arguments: dict[str, Any], seed: str,
                     validators: dict[tuple[int, int], Any] | None = None) -> Any:
    """A response that validates against the operation's response schema.

    Raises:
        UnsatisfiableSchema: no attempt produced a valid instance.
    """
    if operation.response_schema is None or operation.response_validator is None:
        return dict(NO_SCHEMA_RESPONSE)
    last_error = "no attempt"
    for attempt in range(ATTEMPTS):
        echo = arguments if attempt < ATTEMPTS // 2 else {}
        try:
            value = InstanceGenerator(operation.response_schema, f"{seed}#{attempt}", echo, validators).generate()
        except UnsatisfiableSchema as exc:
            last_error = str(exc)
            continue
        if operation.response_is_valid(value):
            return value
        last_error = next(operation.response_validator.iter_errors(value)).message
    raise UnsatisfiableSchema(f"response schema of {operation.tool_name} could not be satisfied: {last_error}")


class RulesSynthesizer:
    """Deterministic synthesizer; ids derive from a hash of session, tool and canonical arguments."""

    engine = ENGINE_RULES
    needs_recent_calls = False

    def __init__(self) -> None:
        self._validators: dict[tuple[int, int], Any] = {}
        """Compiled sub-schema validators, reused across calls (schemas live as long as the process)."""

    async def synthesize(self, ctx: CallContext) -> Synthesis:
        seed = content_hash(ctx.session_id, ctx.operation.tool_name, ctx.arguments)
        body = synthesize_rules(ctx.operation, ctx.arguments, seed, self._validators)
        return Synthesis(body=body, engine=self.engine)
