"""Checks before a BFCL multi-turn run: Gecko answers, runs a state model (`rules` counts, offline), and
serves the multi-turn class toolkits; an LLM model name resolves and its key is set."""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.bfcl.preflight import PreflightError
from inference.gecko import GeckoClient, GeckoError, GeckoNotFoundError, HealthInfo
from utils.llm import LLMError, check_model_names, is_engine_name

RESTART = "python run_gecko_server.py --schemas-dir data/bfcl/openapi/multi_turn --state-model {state}"


def _restart(state: str = "rules") -> str:
    return "restart Gecko with: " + RESTART.format(state=state)


def check_multi_health(health: HealthInfo) -> None:
    """Gecko must be healthy and update state (multi-turn state carries over between turns).

    Raises:
        PreflightError: It is not.
    """
    if health.status != "ok":
        raise PreflightError(f"Gecko reports status {health.status!r}; {_restart()}")
    if not health.state_model_enabled:
        raise PreflightError("Gecko runs without a state model (--state-model none); BFCL multi-turn needs one "
                             "(`rules` works offline): " + _restart())


async def multi_preflight(client: GeckoClient, model: str, toolkits: Sequence[str]) -> HealthInfo:
    """Run every check; returns the health report.

    Args:
        client: Client of the Gecko to use.
        model: `--model`.
        toolkits: The class toolkits the selected tasks need.

    Raises:
        PreflightError: A check failed.
    """
    try:
        health = await client.health()
    except GeckoError as exc:
        raise PreflightError(f"Gecko is not reachable at {client.base_url}: {exc}. Start it with: "
                             + RESTART.format(state="rules")) from exc
    check_multi_health(health)
    for name in sorted(set(toolkits)):
        try:
            await client.toolkit(name)
        except GeckoNotFoundError as exc:
            raise PreflightError(f"Gecko does not serve the multi-turn toolkit {name!r}; {_restart()}") from exc
    if not is_engine_name(model):
        try:
            check_model_names({"planner": model})
        except LLMError as exc:
            raise PreflightError(str(exc)) from exc
    return health
