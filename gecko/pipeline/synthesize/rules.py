"""Rules response synthesis: a schema-valid response, deterministic per (session, tool, arguments) and state.

With a world model (`gecko.pipeline.world`), a call on a bound resource answers from the state: a read returns the
record that was created, a list lists the records, a missing id gets the declared not-found response.
"""

from __future__ import annotations

from typing import Any

from gecko.pipeline.stages import CallContext, Synthesis
from gecko.pipeline.world import respond
from gecko.toolkits.model import Operation
from utils.roles import ENGINE_RULES
from utils.schema.instance import SchemaCache, UnsatisfiableSchema, generate_instance, generate_member

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
    """Deterministic synthesizer; ids derive from a hash of session, tool and canonical arguments; bound calls
    answer from the world model."""

    engine = ENGINE_RULES
    needs_recent_calls = False

    def __init__(self) -> None:
        self._cache = SchemaCache()
        """Compiled sub-schema checks, reused across calls (schemas live as long as the process)."""

    async def synthesize(self, ctx: CallContext) -> Synthesis:
        op = ctx.operation
        seed = ctx.seed
        if op.world is not None:
            answer = respond(op, ctx.arguments, ctx.state, seed,
                             lambda echo, salt: synthesize_rules(op, dict(echo), salt, self._cache),
                             lambda field, salt: generate_member(op.response_schema, field, salt, self._cache),
                             self._cache)
            if answer is not None:
                return Synthesis(body=answer.body, engine=self.engine, status=answer.status, notes=list(answer.notes))
        body = synthesize_rules(op, ctx.arguments, seed, self._cache)
        return Synthesis(body=body, engine=self.engine)

