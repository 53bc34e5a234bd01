"""Checks of Gecko before a BFCL run, so a misconfigured Gecko fails in a second with a fix, not after hours
with wrong numbers (the models are checked by the runner).

- Gecko answers `/health` with status `ok`.
- Single-turn: the state model is disabled (single-turn tasks have no state; the paper's setting), and when the
  validation stage runs an LLM, it is the model under test (`--model`), as in the paper.
- Multi-turn: a state model runs (`rules` counts, offline): the state carries over between turns.
- Gecko serves the toolkits of the selected tasks and takes our key (`benchmarks.runner.gecko_check`).
"""

from __future__ import annotations

from benchmarks.runner import PreflightError
from inference.gecko import HealthInfo
from utils.llm import is_engine_name

SINGLE_TURN_GECKO = ("python run_gecko_server.py --schemas-dir data/bfcl/openapi/single_turn --state-model none "
                     "--validation-model {validation}")
MULTI_TURN_GECKO = "python run_gecko_server.py --schemas-dir data/bfcl/openapi/multi_turn --state-model rules"


def _restart(validation: str) -> str:
    return "restart Gecko with: " + SINGLE_TURN_GECKO.format(validation=validation)


def check_single_turn_health(health: HealthInfo, model: str) -> None:
    """Check the roles reported by `/health` against a single-turn run.

    Raises:
        PreflightError: The state model is on, or the validation LLM is not `model`.
    """
    validation_target = model if not is_engine_name(model) else "rules"
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


def check_multi_turn_health(health: HealthInfo) -> None:
    """Gecko must update state (multi-turn state carries over between turns).

    Raises:
        PreflightError: It does not.
    """
    if not health.state_model_enabled:
        raise PreflightError("Gecko runs without a state model (--state-model none); BFCL multi-turn needs one "
                             f"(`rules` works offline): restart Gecko with: {MULTI_TURN_GECKO}")
