"""Checks before a BFCL single-turn run, so a misconfigured Gecko fails in a second with a fix, not after
hours with wrong numbers.

- Gecko answers `/health` with status `ok`.
- The state model is disabled (single-turn tasks have no state; the paper's setting).
- When the validation stage runs an LLM, it is the model under test (`--model`), as in the paper.
- Gecko serves the task's toolkit (the single-turn toolkits are loaded).
- An LLM model name resolves and its key is set (scripted agents need none).
"""

from __future__ import annotations

from inference.gecko import GeckoClient, GeckoError, GeckoNotFoundError, HealthInfo
from utils.llm import LLMError, check_model_names, is_engine_name

RESTART = ("python run_gecko_server.py --schemas-dir data/bfcl/openapi/single_turn --state-model none "
           "--validation-model {validation}")


class PreflightError(RuntimeError):
    """Gecko (or the model) is not set up for this run; the message says how to fix it."""


def _restart(validation: str) -> str:
    return "restart Gecko with: " + RESTART.format(validation=validation)


def check_health(health: HealthInfo, model: str) -> None:
    """Check the roles reported by `/health` against the run.

    Raises:
        PreflightError: The state model is on, or the validation LLM is not `model`.
    """
    validation_target = model if not is_engine_name(model) else "rules"
    if health.status != "ok":
        raise PreflightError(f"Gecko reports status {health.status!r}; {_restart(validation_target)}")
    if health.state_model_enabled:
        state = health.roles.get("state")
        raise PreflightError(
            f"Gecko runs a state model ({state.model if state else '?'}); BFCL single-turn needs it disabled: "
            + _restart(validation_target))
    validator = health.roles.get("validator")
    if validator is not None and validator.engine not in ("rules", "none") and validator.model != model:
        raise PreflightError(
            f"Gecko's semantic validator runs {validator.model!r} but --model is {model!r}; the paper's setting "
            f"validates with the model under test: " + _restart(validation_target)
            + " (or --validation-model rules for syntactic checks only)")


async def preflight(client: GeckoClient, model: str, sample_toolkit: str | None) -> HealthInfo:
    """Run every check; returns the health report (recorded in the run's config).

    Args:
        client: Client of the Gecko to use.
        model: `--model`.
        sample_toolkit: A task id of the run, to check that its toolkit is loaded.

    Raises:
        PreflightError: A check failed.
    """
    try:
        health = await client.health()
    except GeckoError as exc:
        raise PreflightError(f"Gecko is not reachable at {client.base_url}: {exc}. Start it with: "
                             + RESTART.format(validation="rules")) from exc
    check_health(health, model)
    if sample_toolkit is not None:
        try:
            await client.toolkit(sample_toolkit)
        except GeckoNotFoundError as exc:
            raise PreflightError(f"Gecko does not serve the toolkit {sample_toolkit!r}: the BFCL single-turn "
                                 f"toolkits are not loaded; {_restart('rules')}") from exc
    if not is_engine_name(model):
        try:
            check_model_names({"planner": model})
        except LLMError as exc:
            raise PreflightError(str(exc)) from exc
    return health
