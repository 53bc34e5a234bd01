"""Task records as stored in tau2's `tasks.json`: the user's scenario and the grading criteria.

Only `evaluation_criteria` is used for grading. Nothing outside the evaluator (agents, GATS) may
read it: it is the answer key.
"""

from __future__ import annotations

import textwrap
from enum import Enum
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.taubench.messages import Message, MessageToolCall, Requestor


class RewardType(str, Enum):
    """A component of the reward; a task's `reward_basis` lists those that count."""

    DB = "DB"
    ENV_ASSERTION = "ENV_ASSERTION"
    NL_ASSERTION = "NL_ASSERTION"
    ACTION = "ACTION"
    COMMUNICATE = "COMMUNICATE"


class StructuredUserInstructions(BaseModel):
    """What the simulated customer wants and knows."""

    domain: str = Field(description="Domain name")
    reason_for_call: str = Field(description="Why the customer contacts support")
    known_info: Optional[str] = Field(None, description="Facts the customer can give")
    unknown_info: Optional[str] = Field(None, description="Facts the customer does not know")
    task_instructions: str = Field(description="How the customer should behave")


class UserScenario(BaseModel):
    """Everything the user simulator is told."""

    persona: Optional[str] = Field(None, description="General traits of the customer")
    instructions: Union[StructuredUserInstructions, str] = Field(description="The situation to play")


class Description(BaseModel):
    """Notes on what a task tests (for people and evaluators, not for the agent)."""

    purpose: Optional[str] = None
    relevant_policies: Optional[str] = None
    notes: Optional[str] = None


class Action(BaseModel):
    """One expected tool call of the gold solution."""

    action_id: str = Field(description="Id unique within the task")
    requestor: Requestor = Field("assistant", description="Who should make the call")
    name: str = Field(description="Tool name")
    arguments: dict = Field(description="Expected arguments")
    info: Optional[str] = Field(None, description="Free-text note")
    compare_args: Optional[list[str]] = Field(
        None, description="Arguments compared when matching a call; null compares all of the call's"
    )

    def matches(self, call: MessageToolCall) -> bool:
        """Whether a tool call counts as this action (tau2's action check).

        The names must be equal; then the selected arguments must be equal on both sides.
        """
        if self.name != call.name:
            return False
        keys = call.arguments.keys() if self.compare_args is None else self.compare_args
        if len(keys) == 0:
            return True
        return {k: v for k, v in call.arguments.items() if k in keys} == {
            k: v for k, v in self.arguments.items() if k in keys
        }


class EnvFunctionCall(BaseModel):
    """A function run on the environment (unused by airline and retail)."""

    env_type: Requestor
    func_name: str
    arguments: dict


class EnvAssertion(EnvFunctionCall):
    """A check on the final environment (unused by airline and retail)."""

    assert_value: bool = True
    message: Optional[str] = None


class EvaluationCriteria(BaseModel):
    """The answer key of a task."""

    actions: Optional[list[Action]] = Field(None, description="Gold tool calls, in order")
    env_assertions: Optional[list[EnvAssertion]] = Field(None, description="Checks on the final state")
    communicate_info: Optional[list[str]] = Field(None, description="Strings the agent must say")
    nl_assertions: Optional[list[str]] = Field(None, description="Outcomes an LLM judge checks")
    reward_basis: list[RewardType] = Field(
        default_factory=lambda: [RewardType.DB, RewardType.COMMUNICATE],
        description="Components multiplied into the reward (default DB and COMMUNICATE, as in tau2 v0)",
    )


class InitializationData(BaseModel):
    """Updates applied to the databases before the conversation."""

    agent_data: Optional[dict] = None
    user_data: Optional[dict] = None


class InitialState(BaseModel):
    """A task's starting state; null for every airline and retail task."""

    initialization_data: Optional[InitializationData] = None
    initialization_actions: Optional[list[EnvFunctionCall]] = None
    message_history: Optional[list[Message]] = None


class Task(BaseModel):
    """One benchmark task. Unknown fields of newer task files are kept, not dropped."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(description="Task id, e.g. '0'")
    description: Optional[Description] = None
    user_scenario: UserScenario
    ticket: Optional[str] = Field(None, description="The request as a ticket (solo mode only)")
    initial_state: Optional[InitialState] = None
    evaluation_criteria: Optional[EvaluationCriteria] = None
    issues: Optional[list[dict[str, Any]]] = Field(None, description="Known problems with the task (v1)")
    annotations: Optional[Any] = None

    @property
    def reward_basis(self) -> list[RewardType]:
        """The task's reward basis ([] when it has no criteria)."""
        return [] if self.evaluation_criteria is None else list(self.evaluation_criteria.reward_basis)

    def needs_judge(self) -> bool:
        """Whether grading calls the NL-assertion judge: NL_ASSERTION counts and there are assertions."""
        criteria = self.evaluation_criteria
        return (
            criteria is not None
            and RewardType.NL_ASSERTION in criteria.reward_basis
            and bool(criteria.nl_assertions)
        )


def _indent(text: str) -> str:
    return textwrap.indent(text, "\t")


def render_user_scenario(scenario: UserScenario) -> str:
    """The scenario as the user simulator reads it, in tau2's layout ("Instructions:\\n\\tDomain: ...").

    Args:
        scenario: the task's user scenario.

    Returns:
        Text for the `<scenario>` block of the user simulator's system prompt.
    """
    parts: list[str] = []
    if scenario.persona is not None:
        parts += ["Persona:", _indent(scenario.persona)]
    instructions = scenario.instructions
    if isinstance(instructions, str):
        body = instructions
    else:
        lines = [f"Domain: {instructions.domain}", f"Reason for call:\n{_indent(instructions.reason_for_call)}"]
        if instructions.known_info is not None:
            lines.append(f"Known info:\n{_indent(instructions.known_info)}")
        if instructions.unknown_info is not None:
            lines.append(f"Unknown info:\n{_indent(instructions.unknown_info)}")
        lines.append(f"Task instructions:\n{_indent(instructions.task_instructions)}")
        body = "\n".join(lines)
    parts += ["Instructions:", _indent(body)]
    return "\n".join(parts)


SplitName = Literal["base", "train", "test"]
"""A task split: `base` holds every task."""

TaskSet = Literal["v1", "v0"]
"""Task-set version: `v1` (tau2-bench v1.0.x, current) or `v0` (v0.2, the τ²-bench paper's set)."""
