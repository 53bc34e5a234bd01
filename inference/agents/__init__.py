"""Agents: the LLM planner and the scripted offline agents, all behind one interface (`Agent`)."""

from inference.agents.base import (
    Agent,
    AgentContextFullError,
    AgentError,
    AgentInfrastructureError,
    AgentRequest,
    AgentRequestError,
    AgentRun,
    AgentStep,
    RetryFeedback,
    StopReason,
)
from inference.agents.budget import ContextBudget
from inference.agents.discovery import Discovery, GeckoToolSearch, ToolSearch, ToolSearchError
from inference.agents.llm import LLMPlannerModel, PlannerModel, PlannerReply
from inference.agents.noise import NOISE_KINDS, SCHEMA_KINDS, Corruption, NoiseKind, plan_corruptions
from inference.agents.planner import DEFAULT_MAX_STEPS, PlannerAgent, load_system_prompt
from inference.agents.planner_actor import (
    PLANNER_ACTOR_NAME,
    SCRIPTED_PLANNER_ACTOR_NAME,
    PlanGraph,
    PlannerActorAgent,
    ScriptedPlannerActorAgent,
    SubGoal,
)
from inference.agents.scripted import (
    NOISY_NAME,
    ORACLE_NAME,
    ScriptedCall,
    ScriptedNoisyAgent,
    ScriptedOracleAgent,
)
from inference.agents.select_execute import (
    SCRIPTED_SELECT_EXECUTE_NAME,
    SELECT_EXECUTE_NAME,
    ScriptedSelectExecuteAgent,
    ScriptStep,
    SelectExecuteAgent,
)

__all__ = [
    "DEFAULT_MAX_STEPS", "NOISE_KINDS", "NOISY_NAME", "ORACLE_NAME", "SCHEMA_KINDS", "Agent", "AgentError",
    "AgentContextFullError", "ContextBudget", "AgentInfrastructureError", "AgentRequest", "AgentRequestError", "AgentRun", "AgentStep", "Corruption",
    "LLMPlannerModel", "NoiseKind", "PlannerAgent", "PlannerModel", "PlannerReply", "RetryFeedback",
    "ScriptedCall", "ScriptedNoisyAgent", "ScriptedOracleAgent", "StopReason", "load_system_prompt",
    "plan_corruptions", "PLANNER_ACTOR_NAME", "SCRIPTED_PLANNER_ACTOR_NAME", "SCRIPTED_SELECT_EXECUTE_NAME",
    "SELECT_EXECUTE_NAME", "Discovery", "GeckoToolSearch", "PlanGraph", "PlannerActorAgent", "ScriptStep",
    "ScriptedPlannerActorAgent", "ScriptedSelectExecuteAgent", "SelectExecuteAgent", "SubGoal", "ToolSearch",
    "ToolSearchError",
]
