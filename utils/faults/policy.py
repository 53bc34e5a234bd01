"""The fault-policy format: rules that select calls, and the intervention each applies (YAML or JSON).

```yaml
version: 1
name: flaky-network
seed: 7                      # every draw is a hash of (seed, stream, rule, call number): exact replay
rules:
  - name: drop-writes
    when:                    # every condition must hold (all optional)
      tools: ["orders/*"]    # globs on the tool's names (toolkit/operationId, operationId, original name)
      access: write          # read | write
      calls: [2, 5]          # the n-th calls (1-based, counted per session or per real-tool bridge)
      every: 3               # every 3rd call
      from: 4                # from call 4 on
      until: 20              # up to call 20
      probability: 0.25      # seeded draw
      after_writes: 1        # only after this many successful writes
      state: {path: /orders/0/status, equals: placed}   # a condition on the task state
      side: simulated        # simulated (Gecko sessions) | real (the runners' real-tool bridges)
    do: {kind: unavailable, retry_after: 2}
    limit: 3                 # at most 3 injections by this rule
```

Rules are tried in order; the first that selects a call and wins its draw applies (one intervention per
call). The intervention kinds are the ToolGym state controller's three levels:

| level | kind | what the caller sees |
|---|---|---|
| tool | `timeout`, `rate_limit`, `unavailable`, `server_error` | a 504, 429 (Retry-After), 503, 5xx error; the call does not run (a `timeout` with `executed: true` runs it and loses the answer) |
| state | `delay` | the normal result, late |
| state | `stale_read` | a read returns the result the same read returned before the state last changed |
| state | `corrupt` | the result with a field dropped or nulled, or truncated |
| state | `expire_session` | 401 "session expired" for this call and the next `calls - 1` |
| state | `external_change` | the state is changed (an RFC 6902 patch) before the call, as if by someone else |
| constraint | `constraint` | a new or changed requirement, delivered with the result (`notice`) or as a user message (`user`) |

`load_policy` reads a file or a shipped profile by name (`utils/faults/profiles/<name>.yaml`) and reports
every problem at once (`PolicyError`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from utils.jsontypes import NUMBER_ONLY, JsonBool, JsonFloat

PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
"""The shipped profiles (`flaky-network`, `rate-limited`, `stale-reads`, `moving-goalposts`)."""
MAX_DELAY_SECONDS = 60.0
"""Longest `delay` (or waited `timeout`) a rule may ask for."""
MAX_RULES = 64
MAX_SEED = 2**53 - 1
"""The largest seed: the largest integer every JSON parser reads exactly (I-JSON, RFC 7493)."""

CallNumber = Annotated[int, Field(ge=1), NUMBER_ONLY]
"""A 1-based call number or count (an integer ≥ 1; never `true` or `"3"`)."""
Side = Literal["simulated", "real"]
"""Where a call runs: in a Gecko session (simulated) or on a runner's real-tool bridge (real)."""
Level = Literal["tool", "state", "constraint"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_STATE_TESTS = ("exists", "equals", "not_equals")


class StateCondition(_Strict):
    """A condition on the task state (a JSON document; real-tool bridges give a JSON view of theirs): `path` and
    exactly one of `exists`, `equals`, `not_equals`."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra={"oneOf": [
        {"required": ["exists"]}, {"required": ["equals"]}, {"required": ["not_equals"]}]})
    path: str = Field(pattern=r"^(/.*)?$")
    """RFC 6901 pointer into the state (`""` is the whole state)."""
    exists: JsonBool | None = None
    """The pointer resolves (True) or does not (False)."""
    equals: Any = None
    """The value at the pointer equals this (JSON equality)."""
    not_equals: Any = None
    """The value at the pointer is missing or differs from this."""

    @model_serializer(mode="wrap")
    def _keep_the_test(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The test given, even `null` (`{"equals": null}`), survives `exclude_none`: a stored policy reads back."""
        data = handler(self)
        for name in _STATE_TESTS:
            if name in self.model_fields_set:
                data[name] = getattr(self, name)
        return data

    @model_validator(mode="after")
    def _one_test(self) -> StateCondition:
        tests = [name for name in _STATE_TESTS if name in self.model_fields_set]
        if len(tests) != 1:
            raise ValueError("a state condition takes exactly one of exists, equals, not_equals")
        return self


ECMA_WHITESPACE = frozenset("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                            "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
"""What `\\s` matches in a JSON Schema pattern (ECMA-262), which is not Python's `str.isspace` (that also counts
U+001C-U+001F and U+0085): a glob is blank when it holds nothing else, exactly where the schema's `\\S` fails."""


def _blank(glob: str) -> bool:
    return all(character in ECMA_WHITESPACE for character in glob)


def _tools_schema(schema: dict[str, Any]) -> None:
    """`tools` as JSON Schema: one glob, or a non-empty list of them (a glob is not blank)."""
    glob = {"type": "string", "pattern": r"\S"}
    schema.pop("type", None)
    schema.pop("items", None)
    schema["anyOf"] = [glob, {"type": "array", "minItems": 1, "items": glob}]


class Match(_Strict):
    """Which calls a rule selects: every given condition must hold (`until`, when given with `from`, is not
    before it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    tools: tuple[str, ...] = Field(("*",), json_schema_extra=_tools_schema)
    """Globs (fnmatch) on the tool's names: `toolkit/operationId`, `operationId`, the original name."""
    access: Literal["read", "write"] | None = None
    calls: tuple[CallNumber, ...] | None = None
    """These call numbers only (1-based, counted per session or per real-tool bridge)."""
    every: CallNumber | None = None
    """Every k-th call (k, 2k, …)."""
    from_call: CallNumber | None = Field(None, alias="from")
    """From this call number on."""
    until: CallNumber | None = None
    """Up to this call number (inclusive)."""
    probability: JsonFloat = Field(1.0, ge=0.0, le=1.0)
    """Chance that a selected call is hit (a seeded draw: the same for the same seed, stream and call number)."""
    after_writes: Annotated[int, Field(ge=0), NUMBER_ONLY] | None = None
    """Only once this many successful write calls have run."""
    state: StateCondition | None = None
    side: Side | None = None
    """Only calls on this side (None: both)."""

    @field_validator("tools", mode="before")
    @classmethod
    def _one_glob(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _window(self) -> Match:
        if not self.tools or any(_blank(glob) for glob in self.tools):
            raise ValueError("tools must name at least one non-empty glob (use '*' for every tool)")
        if self.from_call is not None and self.until is not None and self.until < self.from_call:
            raise ValueError(f"until ({self.until}) is before from ({self.from_call}): the rule selects no call")
        return self


class Timeout(_Strict):
    """The service does not answer in time (HTTP 504); the call does not run unless `executed`."""

    kind: Literal["timeout"]
    seconds: JsonFloat = Field(30.0, gt=0)
    """The time-out the error reports."""
    wait: JsonBool = False
    """Really wait `seconds` before answering (at most `MAX_DELAY_SECONDS`)."""
    executed: JsonBool = False
    """The call runs, but its answer is lost: a blind retry repeats a write."""


class RateLimit(_Strict):
    """HTTP 429 Too Many Requests with `Retry-After`; the call does not run."""

    kind: Literal["rate_limit"]
    retry_after: JsonFloat = Field(1.0, ge=0)


class Unavailable(_Strict):
    """HTTP 503 Service Unavailable with `Retry-After`; the call does not run."""

    kind: Literal["unavailable"]
    retry_after: JsonFloat = Field(1.0, ge=0)


class ServerError(_Strict):
    """An HTTP 5xx server error; the call does not run."""

    kind: Literal["server_error"]
    status: Literal[500, 502, 504] = 500


class Delay(_Strict):
    """The normal result, `seconds` late."""

    kind: Literal["delay"]
    seconds: JsonFloat = Field(gt=0, le=MAX_DELAY_SECONDS)


class StaleRead(_Strict):
    """A read answers what the same read (same tool, same arguments) answered before the state last changed.
    Applies only to reads that have such an earlier answer."""

    kind: Literal["stale_read"]


class Corrupt(_Strict):
    """The result is damaged: a field dropped or set to null (chosen by the seeded draw), or the text cut."""

    kind: Literal["corrupt"]
    mode: Literal["drop_field", "null_field", "truncate"] = "drop_field"


class ExpireSession(_Strict):
    """The caller's session with the service expires: HTTP 401 for this call and the next `calls - 1`."""

    kind: Literal["expire_session"]
    calls: Annotated[int, Field(ge=1, le=1000), NUMBER_ONLY] = 1


_PATCH_OPERATION: dict[str, Any] = {"oneOf": [
    {"type": "object", "required": ["op", "path", "value"],
     "properties": {"op": {"enum": ["add", "replace"]}, "path": {"type": "string"}, "value": {}}},
    {"type": "object", "required": ["op", "path"],
     "properties": {"op": {"const": "remove"}, "path": {"type": "string"}}},
]}
"""An RFC 6902 operation `external_change` takes: add, replace (with a value) or remove."""


class ExternalChange(_Strict):
    """Someone else changes the state just before the call: an RFC 6902 patch on the task state."""

    kind: Literal["external_change"]
    patch: tuple[dict[str, Any], ...] = Field(min_length=1, json_schema_extra={"items": _PATCH_OPERATION})
    note: str = ""
    """What happened, for the history and reports (never shown to the agent)."""

    @field_validator("patch")
    @classmethod
    def _ops(cls, ops: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        for index, op in enumerate(ops):
            if op.get("op") not in ("add", "remove", "replace") or not isinstance(op.get("path"), str):
                raise ValueError(f"patch[{index}] must be an add, remove or replace operation with a path")
            if op["op"] != "remove" and "value" not in op:
                raise ValueError(f"patch[{index}] ({op['op']}) needs a value")
        return ops


class Constraint(_Strict):
    """A new or changed requirement arrives mid-task; it is added to the task's checklist."""

    kind: Literal["constraint"]
    text: str = Field(min_length=1, max_length=2000)
    """The requirement, as the user states it."""
    replaces: str | None = None
    """The id of the checklist item it replaces (None: a new item)."""
    deliver: Literal["notice", "user"] = "notice"
    """`notice`: attached to this call's result; `user`: a new user message where the runner has a user
    (a simulation without one delivers it as a notice)."""


Intervention = Annotated[
    Timeout | RateLimit | Unavailable | ServerError | Delay | StaleRead | Corrupt | ExpireSession | ExternalChange
    | Constraint,
    Field(discriminator="kind"),
]

LEVELS: dict[str, Level] = {
    "timeout": "tool", "rate_limit": "tool", "unavailable": "tool", "server_error": "tool",
    "delay": "state", "stale_read": "state", "corrupt": "state", "expire_session": "state",
    "external_change": "state", "constraint": "constraint",
}
"""The level of every intervention kind."""
BLOCKING_KINDS = frozenset({"timeout", "rate_limit", "unavailable", "server_error", "expire_session"})
"""Kinds whose caller gets an error instead of the result (infrastructure-style faults)."""


class FaultRule(_Strict):
    """One rule: which calls (`when`), what happens (`do`), how often at most (`limit`)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    """Unique within the policy; recorded with every injection."""
    when: Match = Field(default_factory=Match)
    do: Intervention
    limit: CallNumber | None = None
    """Injections by this rule at most (per session or bridge); None: no limit."""

    @property
    def level(self) -> Level:
        """`tool`, `state` or `constraint`."""
        return LEVELS[self.do.kind]


class FaultPolicy(_Strict):
    """A fault policy: a seed and ordered rules (see the module docstring); rule names are unique."""

    version: Literal[1] = 1
    name: str = Field("", max_length=100)
    description: str = Field("", max_length=2000)
    seed: Annotated[int, Field(ge=0, le=MAX_SEED), NUMBER_ONLY] = 0
    stream: str = Field("", max_length=200)
    """Separates independent sequences of draws under one seed (runners set it per task and side)."""
    rules: tuple[FaultRule, ...] = Field(default=(), max_length=MAX_RULES)
    _plan: PolicyPlan = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Precompute what the decision reads per call (it runs on every call of a session)."""
        self._plan = PolicyPlan(self)

    @property
    def plan(self) -> PolicyPlan:
        """The policy as plain attributes, for the per-call decision (pydantic attribute access costs more)."""
        return self._plan

    @property
    def reads_earlier(self) -> bool:
        """A rule may answer a read with an earlier answer (callers then look one up)."""
        return self._plan.reads_earlier

    @property
    def reads_state(self) -> bool:
        """A rule looks at the task state (callers then offer `CallFacts.state`)."""
        return self._plan.reads_state

    @model_validator(mode="after")
    def _unique_names(self) -> FaultPolicy:
        names = [rule.name for rule in self.rules]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"rule names must be unique; repeated: {', '.join(twice)}")
        return self

    def public(self) -> dict[str, Any]:
        """JSON form (what sessions store and runners record)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def for_stream(self, stream: str) -> FaultPolicy:
        """The same policy drawing an independent sequence named `stream`."""
        copy = self.model_copy(update={"stream": stream})
        copy._plan = PolicyPlan(copy)  # model_copy keeps the private plan, whose stream is the old one
        return copy

    @property
    def label(self) -> str:
        """The policy's name, or `custom`."""
        return self.name or "custom"


class PolicyError(ValueError):
    """A policy file or document is unreadable or invalid; the message lists every problem."""


def _describe(exc: ValidationError, source: str) -> PolicyError:
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"] if not (isinstance(part, str) and part in LEVELS))
        problems.append(f"{where or 'policy'}: {error['msg']}")
    return PolicyError(f"invalid fault policy {source}: " + "; ".join(problems))


def parse_policy(data: Any, source: str = "(document)") -> FaultPolicy:
    """Validate a policy document (a mapping).

    Raises:
        PolicyError: what is wrong, where.
    """
    if not isinstance(data, dict):
        raise PolicyError(f"invalid fault policy {source}: expected a mapping with `rules`, got {type(data).__name__}")
    try:
        return FaultPolicy.model_validate(data)
    except ValidationError as exc:
        raise _describe(exc, source) from None


def profile_names() -> list[str]:
    """The shipped profiles."""
    return sorted(path.stem for path in PROFILES_DIR.glob("*.yaml"))


def load_policy(spec: str | Path) -> FaultPolicy:
    """A policy from a YAML or JSON file, or a shipped profile by name (`flaky-network`, …).

    Raises:
        PolicyError: no such file or profile, unreadable, or invalid (every problem listed).
    """
    path = Path(spec).expanduser()
    if not path.is_file():
        profile = PROFILES_DIR / f"{spec}.yaml"
        if isinstance(spec, str) and "/" not in spec and profile.is_file():
            path = profile
        else:
            raise PolicyError(f"no fault policy file {str(spec)!r} and no profile of that name; profiles: "
                              f"{', '.join(profile_names())}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"cannot read the fault policy {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise PolicyError(f"the fault policy {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: "
                          f"{exc}") from None
    return parse_policy(data, str(path))


class RulePlan:
    """One rule's selector and intervention as plain attributes (see `PolicyPlan`)."""

    __slots__ = ("rule", "name", "probability", "side", "access", "any_tool", "tools", "calls", "every", "from_call",
                 "until", "after_writes", "limit", "stale", "state", "kind", "expire_calls")

    def __init__(self, rule: FaultRule) -> None:
        match = rule.when
        self.rule = rule
        self.name = rule.name
        self.probability = match.probability
        self.side, self.access = match.side, match.access
        self.any_tool = match.tools == ("*",)
        self.tools = match.tools
        self.calls = frozenset(match.calls) if match.calls is not None else None
        self.every, self.from_call, self.until = match.every, match.from_call, match.until
        self.after_writes, self.limit = match.after_writes, rule.limit
        self.stale = rule.do.kind == "stale_read"
        self.state = match.state
        self.kind = rule.do.kind
        self.expire_calls = rule.do.calls if isinstance(rule.do, ExpireSession) else 0


class PolicyPlan:
    """A policy compiled once for the decision: its seed, stream and rules as plain attributes."""

    __slots__ = ("seed", "stream", "rules", "reads_earlier", "reads_state", "_source")

    def __init__(self, policy: FaultPolicy) -> None:
        self._source = (policy.seed, policy.stream, policy.rules)
        self.seed, self.stream = policy.seed, policy.stream
        self.rules = tuple(RulePlan(rule) for rule in policy.rules)
        self.reads_earlier = any(rule.stale for rule in self.rules)
        self.reads_state = any(rule.state is not None for rule in self.rules)

    def __eq__(self, other: object) -> bool:  # pydantic compares private attributes: equal policies, equal plans
        return isinstance(other, PolicyPlan) and self._source == other._source
