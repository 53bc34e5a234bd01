"""The roles of Gecko's LLM work, in one table: everything else that names a role is derived from it.

`SERVER_ROLES` — the server's pipeline roles. Each is served by an engine chosen by name: `rules`,
`none` (where the role can be skipped) or a model alias. From each row come the `Settings` field
(`<name>_model`), the server flag (`--<name>-model`), the variable `GECKO_<NAME>_MODEL`, the entry
of `GET /health`, the check that refuses `none` where it is not allowed, and the engines, which
`gecko.pipeline.engines` takes from the stage package `gecko.pipeline.<package>.role`.

`CALL_ROLES` — every kind of LLM call, by the name its usage records carry (`role` in
`/sessions/{id}/usage` and in `/metrics`): the calls of the server stages, and those of the client
side (planner, user simulator, …). The client sends the name with every request in the
`X-Gecko-Role` header, which is how the local stub knows what to answer (real models never see it).

Adding a server stage: one `ServerRole` row here (with its `CallRole`s) and the stage's package under
`gecko/pipeline/` (its `role.py`, a Protocol in `gecko/pipeline/stages.py`, its call in the runner).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ENGINE_RULES = "rules"
"""The deterministic engine every server role has (the offline default)."""
ENGINE_NONE = "none"
"""Skip the role (only where `ServerRole.none_means` says what that does)."""


@dataclass(frozen=True)
class CallRole:
    """One kind of LLM call."""

    name: str
    """Usage role: recorded with every call, summed per role, sent as `X-Gecko-Role`."""
    summary: str
    """What the call produces."""
    max_tokens: int = 1024
    """Output cap of a call of this role when its caller sets none (the server stages set theirs from
    `Settings`, the runners from `--max-tokens`): sized to what the call must produce, so a model that
    loops stops in seconds, not at the request timeout."""
    uses_tools: bool = False
    """The call offers tools (function calling); the runners' preflight checks that its model calls them."""


VALIDATOR = CallRole("validator", "semantic check of a call's arguments", 256)
RESPONDER = CallRole("responder", "a tool's response", 1024)
STATE = CallRole("state", "JSON Patch of the task state after a call", 768)
BOOTSTRAP = CallRole("bootstrap", "initial task state of a session", 1024)
CHECKLIST = CallRole("checklist", "checklist of a task", 512)
JUDGE = CallRole("judge", "verdict per checklist item", 768)
CONVERTER = CallRole("converter", "response schema inferred by `gecko convert`", 1024)
PLANNER = CallRole("planner", "the agent under test: GATS planner, BFCL", 512, uses_tools=True)
AGENT = CallRole("agent", "tau2's agent", 512, uses_tools=True)
USER = CallRole("user", "tau2's user simulator", 256)
NL_JUDGE = CallRole("nl_judge", "tau2's natural-language assertion judge", 512)
TASK_WRITER = CallRole("task_writer", "an open-world task (instruction, reference calls, checklist) from pool tools",
                       4096)
PROBE = CallRole("probe", "checks of a model's endpoint: capabilities, tool support, the runners' preflight request",
                 16)

CALL_ROLES: tuple[CallRole, ...] = (VALIDATOR, RESPONDER, STATE, BOOTSTRAP, CHECKLIST, JUDGE, CONVERTER,
                                    PLANNER, AGENT, USER, NL_JUDGE, TASK_WRITER, PROBE)
"""Every usage role: the server's (stages, then `gecko convert`), then the client side's, then the probes."""
_CALL_ROLES_BY_NAME = {role.name: role for role in CALL_ROLES}


@dataclass(frozen=True)
class ServerRole:
    """A pipeline role of the Gecko server, served by `rules`, `none` (where allowed) or a model alias."""

    name: str
    """Stem of the settings field, flag and variable: `validation` → `validation_model`, `--validation-model`."""
    package: str
    """Stage package under `gecko/pipeline/` whose `role.py` builds the engines (`ENGINES`)."""
    calls: tuple[CallRole, ...]
    """The LLM calls its engines make; the first names the role in `GET /health`."""
    summary: str
    """What the role does (help text)."""
    rules_means: str
    """What the `rules` engine does."""
    none_means: str | None = None
    """What `none` does; None: the role cannot be skipped."""
    default: str = ENGINE_RULES
    panel: bool = False
    """The role may name several models, comma-separated (a panel whose verdicts are combined)."""
    deadline_s: float = 60.0
    """Default total time of one LLM step of the role (every attempt, back-off and repair round included)."""

    @property
    def public(self) -> str:
        """The role's key in `GET /health` (its main usage role)."""
        return self.calls[0].name

    @property
    def none_allowed(self) -> bool:
        return self.none_means is not None

    @property
    def help(self) -> str:
        """One-sentence description of the `<name>_model` setting."""
        none = f", `none` ({self.none_means})" if self.none_means else ""
        panel = "; several comma-separated aliases make a panel (see `--judge-vote`)" if self.panel else ""
        return f"Engine of {self.summary}: `rules` ({self.rules_means}){none} or a model alias{panel}."


SERVER_ROLES: tuple[ServerRole, ...] = (
    ServerRole("validation", "validate", (VALIDATOR,), "the semantic check of arguments",
               rules_means="syntactic checks only", none_means="same as rules", deadline_s=30.0),
    ServerRole("response", "synthesize", (RESPONDER,), "response synthesis",
               rules_means="schema-driven, deterministic", deadline_s=45.0),
    ServerRole("state", "state", (STATE, BOOTSTRAP), "task-state updates",
               rules_means="deterministic reducer", none_means="no state updates, e.g. BFCL single-turn",
               deadline_s=45.0),
    ServerRole("judge", "judge", (JUDGE, CHECKLIST), "checklist generation and judging",
               rules_means="gating judge", panel=True, deadline_s=90.0),
)
"""The pipeline roles, in pipeline order."""


@dataclass(frozen=True)
class RoleSetting:
    """A setting every server role has: field `<role>_<suffix>`, flag `--<role>-<suffix>`, `GECKO_<ROLE>_<SUFFIX>`."""

    suffix: str
    annotation: Any
    """Type of the field."""
    default: Callable[[ServerRole], Any]
    help: Callable[[ServerRole], str]
    bounds: tuple[tuple[str, Any], ...] = ()
    """pydantic `Field` constraints, e.g. `(("ge", 1),)`."""

    def field(self, role: ServerRole) -> str:
        """The settings field of `role` (`validation_model`)."""
        return f"{role.name}_{self.suffix}"


ROLE_SETTINGS: tuple[RoleSetting, ...] = (
    RoleSetting("model", str, lambda role: role.default, lambda role: role.help),
    RoleSetting("max_tokens", int, lambda role: max(call.max_tokens for call in role.calls),
                lambda role: f"Output cap (tokens) of each LLM call of {role.summary} "
                             f"({', '.join(call.name for call in role.calls)}).", (("ge", 1),)),
    RoleSetting("deadline", float, lambda role: role.deadline_s,
                lambda role: f"Seconds one LLM step of {role.summary} may take in all (every attempt, back-off and "
                             "repair round); then the stage falls back, or fails as its role says.", (("gt", 0),)),
)
"""Per-role settings; a new per-role knob is one row here plus, where its default differs by role, a
`ServerRole` (or `CallRole`) column."""
MODEL_SETTING = ROLE_SETTINGS[0]
MAX_TOKENS_SETTING = ROLE_SETTINGS[1]
DEADLINE_SETTING = ROLE_SETTINGS[2]


def panel_models(name: str) -> list[str]:
    """The model aliases a role's setting names: one, or a panel's (`a,b,c`; blanks around commas ignored).

    The commas of a generic name's declared capabilities (`openai-compatible:m@URL#tools,json_schema=off`) stay
    in that name: after a part with a `#`, a part that declares a capability (`tools`, `json_schema=off`) is one.
    """
    if "," not in name:
        return [name]
    capabilities: tuple[str, ...] = ()
    if "#" in name:
        from utils.llm.aliases import CAPABILITY_NAMES  # here: utils.llm imports this module

        capabilities = CAPABILITY_NAMES
    models: list[str] = []
    for part in (p.strip() for p in name.split(",")):
        if models and "#" in models[-1] and part.partition("=")[0].strip() in capabilities:
            models[-1] += "," + part
        else:
            models.append(part)
    return models


def server_role(name: str) -> ServerRole:
    """The server role called `name` (`validation`, `response`, `state`, `judge`).

    Raises:
        KeyError: no such role.
    """
    for role in SERVER_ROLES:
        if role.name == name:
            return role
    raise KeyError(f"unknown server role {name!r}; known: {', '.join(r.name for r in SERVER_ROLES)}")


def call_role(name: str) -> CallRole | None:
    """The usage role called `name`, or None."""
    return _CALL_ROLES_BY_NAME.get(name)
