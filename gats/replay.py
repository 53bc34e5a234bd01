"""`PlanReplayAgent`: a scripted real-run agent that makes the plan's calls as planned, then answers.

It is the offline stand-in for "the real agent follows the plan" (used with the scripted noisy agent, whose
best simulated attempt is the plan). An LLM planner given the plan as a message is the real thing.
"""

from __future__ import annotations

import time

from gats.plan import Plan
from inference.agents.base import AgentInfrastructureError, AgentRequest, AgentRun, AgentStep
from inference.tools.execution import CallRecord, ToolCallRequest, ToolExecutor, ToolInfrastructureError

REPLAY_NAME = "plan-replay"
DONE_TEXT = "Done."


class PlanReplayAgent:
    """Replays a plan's calls (none when there is no plan).

    Args:
        plan: The plan to replay.
    """

    name = REPLAY_NAME

    def __init__(self, plan: Plan | None) -> None:
        self.plan = plan

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Make every planned call in one step."""
        started = time.perf_counter()
        records: list[CallRecord] = []
        steps = self.plan.steps if self.plan is not None else ()
        try:
            for index, step in enumerate(steps):
                records.append(await tools.execute(ToolCallRequest(f"replay_{index}", step.agent_name,
                                                                   dict(step.arguments)), 0))
        except ToolInfrastructureError as exc:
            partial = AgentRun(self.name, (AgentStep(0, None, tuple(records)),), None, "max_steps",
                               latency_s=time.perf_counter() - started)
            raise AgentInfrastructureError(f"tool backend failed: {exc}", partial) from exc
        run_steps = (AgentStep(0, None, tuple(records)), AgentStep(1, DONE_TEXT, ())) if records else (
            AgentStep(0, DONE_TEXT, ()),)
        return AgentRun(self.name, run_steps, DONE_TEXT, "answer", latency_s=time.perf_counter() - started)
