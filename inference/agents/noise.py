"""The error model of the scripted noisy agent: seeded corruptions of correct calls, and which feedback
names them.

Each call of the script is corrupted with probability `error_rate`; the kind is drawn uniformly from the
kinds that apply to that call and its tool's argument schema (at most one corruption per call):

| kind | what changes | caught by |
|---|---|---|
| `wrong_type` | a present argument gets a value of another JSON type (`10` → `"10"`, `"x"` → `0`) | schema (`type`) |
| `missing_required` | a present required argument is dropped | schema (`required`) |
| `unknown_argument` | an argument the tool does not declare is added (needs `additionalProperties: false`) | schema |
| `out_of_range` | a value outside the argument's `enum`, `minimum` or `maximum` | schema (`enum`, ranges) |
| `misspelled_tool` | the tool name gets its last letter doubled | unknown tool (the executor) |
| `semantic` | a schema-valid wrong value: number ± 1 (or × 2), boolean flipped, another enum member, text with ` (draft)` appended | nothing syntactic; only a semantic check |

Draws use `random.Random(f"{seed}:{key}")` (the key is the task id), so a task always gets the same errors.
A corruption is *named* by feedback when the previous attempt's result for that call says so: an error
whose JSON pointer starts at the corrupted argument, or "unknown tool" for a misspelled name. A semantic
error is named only by a semantic-validation error that mentions the argument.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inference.tools.catalog import CatalogTool
from inference.tools.execution import CallRecord

NoiseKind = Literal["wrong_type", "missing_required", "unknown_argument", "out_of_range", "misspelled_tool",
                    "semantic"]
NOISE_KINDS: tuple[NoiseKind, ...] = ("wrong_type", "missing_required", "unknown_argument", "out_of_range",
                                      "misspelled_tool", "semantic")
SCHEMA_KINDS: frozenset[str] = frozenset(NOISE_KINDS) - {"semantic"}
"""Kinds a syntactic check (or the tool-name lookup) detects."""
DEFAULT_ERROR_RATE = 0.6
EXTRA_ARGUMENT = "verbose"
SEMANTIC_SUFFIX = " (draft)"
_SIMPLE_TYPES = ("string", "integer", "number", "boolean", "array", "object")


@dataclass(frozen=True)
class Corruption:
    """One injected error."""

    call_index: int
    kind: NoiseKind
    argument: str | None
    """The top-level argument concerned (None for a misspelled tool name)."""
    name: str
    """The tool name the corrupted call uses (the agent name, or its misspelling)."""
    arguments: Mapping[str, Any]
    """The corrupted arguments."""
    description: str

    @property
    def detectable(self) -> bool:
        """Whether a schema check or the tool-name lookup catches it."""
        return self.kind in SCHEMA_KINDS

    def public(self) -> dict[str, Any]:
        """JSON form for traces."""
        return {"call": self.call_index, "kind": self.kind, "argument": self.argument,
                "detectable": self.detectable, "description": self.description}


def _properties(spec: CatalogTool) -> Mapping[str, Any]:
    props = spec.parameters.get("properties") if isinstance(spec.parameters, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def _type(schema: Any) -> str | None:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    return kind if isinstance(kind, str) and kind in _SIMPLE_TYPES else None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _other_type(kind: str, value: Any) -> Any:
    if kind == "string":
        return len(value) if isinstance(value, str) else 0
    if kind in ("integer", "number", "boolean"):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if kind == "array":
        return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return str(value)


def _semantic_value(schema: Mapping[str, Any], value: Any) -> Any:
    """A different value that still fits `schema`, or None when none is easy to make."""
    if isinstance(value, bool):
        return not value if _type(schema) in ("boolean", None) else None
    enum = schema.get("enum")
    if isinstance(enum, list):
        others = [v for v in enum if v != value and type(v) is type(value)]
        return others[0] if others else None
    low, high = schema.get("minimum"), schema.get("maximum")
    if _is_number(value) and _type(schema) in ("integer", "number"):
        for candidate in (value + 1, value - 1, value * 2):
            fits_low = not _is_number(low) or candidate >= low
            fits_high = not _is_number(high) or candidate <= high
            if candidate != value and fits_low and fits_high and "multipleOf" not in schema:
                return candidate
        return None
    if isinstance(value, str) and _type(schema) == "string":
        if any(key in schema for key in ("pattern", "format", "maxLength", "const")):
            return None
        return value + SEMANTIC_SUFFIX
    return None


def _out_of_range(schema: Mapping[str, Any], value: Any) -> Any:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        candidate = "not_" + str(value)
        while candidate in enum:
            candidate += "_"
        return candidate
    if _type(schema) in ("integer", "number") and _is_number(value):
        if _is_number(schema.get("minimum")):
            return schema["minimum"] - 1
        if _is_number(schema.get("maximum")):
            return schema["maximum"] + 1
    return None


def _options(spec: CatalogTool, arguments: Mapping[str, Any], taken_names: set[str]) -> dict[str, list[Any]]:
    """For each kind, its candidates: (argument, corrupted arguments, description[, misspelled name])."""
    props = _properties(spec)
    required = spec.parameters.get("required", []) if isinstance(spec.parameters, Mapping) else []
    present = [(name, value) for name, value in arguments.items() if name in props and value is not None]
    options: dict[str, list[Any]] = {kind: [] for kind in NOISE_KINDS}
    for name, value in present:
        schema = props[name]
        kind = _type(schema)
        if kind is not None:
            wrong = _other_type(kind, value)
            options["wrong_type"].append((name, {**arguments, name: wrong}, f"{name}: {value!r} -> {wrong!r}"))
        if name in required:
            rest = {k: v for k, v in arguments.items() if k != name}
            options["missing_required"].append((name, rest, f"dropped required {name}"))
        outside = _out_of_range(schema, value)
        if outside is not None:
            options["out_of_range"].append((name, {**arguments, name: outside}, f"{name}: {value!r} -> {outside!r}"))
        changed = _semantic_value(schema, value)
        if changed is not None:
            options["semantic"].append((name, {**arguments, name: changed}, f"{name}: {value!r} -> {changed!r}"))
    if spec.parameters.get("additionalProperties") is False:
        extra = EXTRA_ARGUMENT
        while extra in props or extra in arguments:
            extra += "_"
        options["unknown_argument"].append((extra, {**arguments, extra: True}, f"added unknown {extra}=True"))
    misspelled = spec.agent_name + spec.agent_name[-1]
    while misspelled in taken_names:
        misspelled += "x"
    options["misspelled_tool"].append((None, dict(arguments), f"tool name {spec.agent_name} -> {misspelled}",
                                       misspelled))
    return options


def plan_corruptions(
    calls: Sequence[tuple[CatalogTool | None, Mapping[str, Any]]],
    *,
    key: str,
    seed: int = 0,
    error_rate: float = DEFAULT_ERROR_RATE,
    kinds: Sequence[NoiseKind] = NOISE_KINDS,
    taken_names: set[str] | None = None,
) -> tuple[Corruption | None, ...]:
    """Draw at most one corruption per call.

    Args:
        calls: The correct calls: the resolved tool (None if unknown: never corrupted) and arguments.
        key: Per-task part of the seed (the task id).
        seed: Run seed.
        error_rate: Probability that a call is corrupted.
        kinds: Kinds that may be drawn.
        taken_names: Agent names of the catalog (a misspelling never hits a real tool).
    """
    rng = random.Random(f"{seed}:{key}")
    plan: list[Corruption | None] = []
    for index, (spec, arguments) in enumerate(calls):
        draw = rng.random()
        if spec is None or draw >= error_rate:
            plan.append(None)
            continue
        options = _options(spec, arguments, taken_names or set())
        applicable = [kind for kind in kinds if options[kind]]
        if not applicable:
            plan.append(None)
            continue
        kind = rng.choice(applicable)
        argument, corrupted, description, *renamed = rng.choice(options[kind])
        name = renamed[0] if renamed else spec.agent_name
        plan.append(Corruption(index, kind, argument, name, corrupted, description))
    return tuple(plan)


def is_named(corruption: Corruption, record: CallRecord | None) -> bool:
    """Whether the previous attempt's result for the corrupted call names this error."""
    if record is None or record.outcome.ok:
        return False
    if corruption.kind == "misspelled_tool":
        return record.outcome.error_kind == "unknown_tool"
    target = f"/{corruption.argument}"
    for error in record.outcome.errors:
        if corruption.kind == "semantic":
            if error.keyword == "semantic" and str(corruption.argument) in error.message:
                return True
        elif error.pointer == target or error.pointer.startswith(target + "/"):
            return True
    return False
