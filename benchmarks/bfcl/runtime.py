"""What a runner needs per BFCL task besides its data: toolkit files, prompt-form function docs, real tools.

- Toolkits: single-turn tasks use one generated toolkit each, `data/bfcl/openapi/single_turn/<task_id>.json`;
  multi-turn tasks use one toolkit per involved class, `data/bfcl/openapi/multi_turn/<ClassName>.json`.
  The files are produced by the toolkit converter, not here.
- Prompt docs: the official generator appends " Note that the provided function is in Python 3 syntax." to
  every offered description (held-out miss_func docs are added later, without it); `prompt_functions` does
  the same on copies.
- Real tools: multi-turn tasks execute on `real_tools.BfclRealTools`, one per task.
"""

from __future__ import annotations

import copy
from pathlib import Path

from benchmarks.bfcl.loader import BfclTask, FunctionDoc, MultiTurnTask
from benchmarks.bfcl.real_tools import BfclRealTools
from utils.paths import DATA_DIR

OPENAPI_DIR = DATA_DIR / "bfcl" / "openapi"
"""Root of the generated BFCL toolkits (`single_turn/` and `multi_turn/` below it)."""
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
"""Appended to function descriptions in prompts by the official generator (`bfcl_eval.utils`)."""


def toolkit_paths(task: BfclTask, openapi_dir: Path = OPENAPI_DIR) -> list[Path]:
    """The toolkit files a task runs against (they may not exist yet if the converter has not run)."""
    kind = "multi_turn" if task.is_multi_turn else "single_turn"
    return [openapi_dir / kind / f"{name}.json" for name in task.toolkits]


def prompt_functions(task: BfclTask, turn: int = 0) -> list[FunctionDoc]:
    """Copies of the docs offered at `turn`, in prompt form (language hint on the base docs only)."""
    hinted = copy.deepcopy(list(task.functions))
    for doc in hinted:
        doc["description"] = doc.get("description", "") + PYTHON_HINT
    if isinstance(task, MultiTurnTask):
        hinted += [copy.deepcopy(doc) for doc in task.functions_at_turn(turn)[len(task.functions) :]]
    return hinted


def real_tools(task: MultiTurnTask) -> BfclRealTools:
    """Fresh real tool instances for a multi-turn task, loaded from its initial config."""
    return BfclRealTools(task.involved_classes, task.initial_config, long_context=task.long_context)
