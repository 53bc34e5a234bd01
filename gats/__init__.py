"""GATS: grounding agent test-time scaling. Algorithm 1 per user turn, independent of any benchmark.

Public API: `run_turn` (the loop), its data (`GatsConfig`, `TurnInput`, `TurnResult`, `AttemptRecord`,
`Verdict`, `Objective`), the pure decisions (`attempt_status`, `should_stop`, `best_attempt`, `turn_status`),
the feedback builder, and the `Sandbox` port the loop runs against.
Per-turn real execution (multi-turn benchmarks): `run_conversation` with `RealTurnSetup`, `TurnAgents`,
`ConversationTurn`, a `StateSync` (`GeckoStateSync`), plans from the best attempt (`build_plan`,
`divergence`) and `PlanReplayAgent`.
"""

from gats.feedback import build_feedback, load_feedback_prompt, remaining_objectives
from gats.loop import run_attempt, run_turn, verdict_from
from gats.model import (
    AttemptLatency,
    AttemptRecord,
    AttemptStatus,
    GatsConfig,
    Objective,
    TurnInput,
    TurnResult,
    TurnStatus,
    Verdict,
)
from gats.plan import Plan, build_plan, divergence
from gats.ports import Sandbox
from gats.replay import PlanReplayAgent
from gats.select import attempt_status, best_attempt, should_stop, turn_status
from gats.turns import (
    ConversationResult,
    ConversationTurn,
    GeckoStateSync,
    RealTurnSetup,
    StateSync,
    TurnAgents,
    run_conversation,
)

__all__ = [
    "AttemptLatency", "AttemptRecord", "AttemptStatus", "GatsConfig", "Objective", "Sandbox", "TurnInput",
    "TurnResult", "TurnStatus", "Verdict", "attempt_status", "best_attempt", "build_feedback",
    "load_feedback_prompt", "remaining_objectives", "run_attempt", "run_turn", "should_stop", "turn_status",
    "verdict_from", "ConversationResult", "ConversationTurn", "GeckoStateSync", "Plan", "PlanReplayAgent",
    "RealTurnSetup", "StateSync", "TurnAgents", "build_plan", "divergence", "run_conversation",
]
