"""Trajectories from a task's gold calls: as they are, with one seeded error, or as the scripted noisy agent
makes them.

- `gold`: the gold calls (BFCL ground truth, tau2 gold actions).
- `perturbed`: exactly one error of a known kind, so every kind gets its own TPR/FPR. The kind cycles over the
  tasks (`PERTURBATION_KINDS`, by a stable hash of the task id), the call is drawn with a seeded generator among
  the calls the kind applies to; the error itself is the scripted noisy agent's (`inference.agents.noise`):
  wrong type, missing required argument, unknown argument, value out of enum or range, misspelled tool, or a
  schema-valid wrong value (`semantic`). One more kind, `dropped_call`, leaves out one gold write, so later calls
  meet a state they were not written for.
- `noisy`: the first attempt of `ScriptedNoisyAgent` for the task: every call corrupted with probability
  `error_rate`, by the same plan (`plan_corruptions` with the task id as key and the same seed).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Final, Literal

from benchmarks.fidelity.model import PlannedCall
from inference.agents.noise import DEFAULT_ERROR_RATE, NOISE_KINDS, Corruption, NoiseKind, plan_corruptions
from inference.tools.catalog import CatalogTool, ToolCatalog

DROPPED_CALL: Final = "dropped_call"
PERTURBATION_KINDS: tuple[NoiseKind | Literal["dropped_call"], ...] = (*NOISE_KINDS, DROPPED_CALL)
"""The kinds `perturbed` cycles over."""


def resolve(calls: Sequence[PlannedCall], catalog: ToolCatalog) -> list[PlannedCall]:
    """The calls with their Gecko toolkit and operationId filled in from the catalog (unknown names keep None)."""
    out = []
    for call in calls:
        spec = catalog.by_original_name(call.name)
        out.append(call if spec is None else replace(call, toolkit=spec.toolkit, operation_id=spec.operation_id))
    return out


def _apply(call: PlannedCall, spec: CatalogTool, corruption: Corruption) -> PlannedCall:
    misspelled = corruption.kind == "misspelled_tool"
    return replace(call, name=corruption.name if misspelled else call.name, arguments=dict(corruption.arguments),
                   perturbation=corruption.kind, toolkit=spec.toolkit,
                   operation_id=corruption.name if misspelled else spec.operation_id)


def _stable_index(text: str, modulo: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % modulo


def perturbed(calls: Sequence[PlannedCall], catalog: ToolCatalog, *, key: str,
              seed: int = 0) -> tuple[list[PlannedCall], str | None]:
    """The gold calls with one error; returns the calls and a note of what changed (None: nothing applied).

    The kind is `PERTURBATION_KINDS[hash(key)]`; when it applies to no call, the next kind is tried.
    """
    resolved = resolve(calls, catalog)
    rng = random.Random(f"{seed}:{key}:perturbed")
    taken = set(catalog.by_agent_name)
    first = _stable_index(key, len(PERTURBATION_KINDS))
    for offset in range(len(PERTURBATION_KINDS)):
        kind = PERTURBATION_KINDS[(first + offset) % len(PERTURBATION_KINDS)]
        if kind == DROPPED_CALL:
            writes = [i for i, c in enumerate(resolved)
                      if (spec := catalog.by_original_name(c.name)) is not None and spec.access == "write"]
            if not writes:
                continue
            index = rng.choice(writes)
            return resolved[:index] + resolved[index + 1:], f"{DROPPED_CALL}: left out call {index} ({resolved[index].name})"
        candidates = []
        for index, call in enumerate(resolved):
            spec = catalog.by_original_name(call.name)
            if spec is None:
                continue
            plan = plan_corruptions([(spec, call.arguments)], key=f"{key}:{index}", seed=seed, error_rate=1.0,
                                    kinds=(kind,), taken_names=taken)
            if plan[0] is not None:
                candidates.append((index, spec, plan[0]))
        if candidates:
            index, spec, corruption = rng.choice(candidates)
            out = list(resolved)
            out[index] = _apply(resolved[index], spec, corruption)
            return out, f"{kind}: call {index} ({resolved[index].name}): {corruption.description}"
    return resolved, None


def noisy(calls: Sequence[PlannedCall], catalog: ToolCatalog, *, key: str, seed: int = 0,
          error_rate: float = DEFAULT_ERROR_RATE) -> tuple[list[PlannedCall], list[str]]:
    """The scripted noisy agent's first attempt at the gold calls; returns the calls and a note per error."""
    resolved = resolve(calls, catalog)
    specs = [catalog.by_original_name(c.name) for c in resolved]
    plan = plan_corruptions([(spec, c.arguments) for spec, c in zip(specs, resolved)], key=key, seed=seed,
                            error_rate=error_rate, taken_names=set(catalog.by_agent_name))
    out, notes = [], []
    for index, (call, spec, corruption) in enumerate(zip(resolved, specs, plan)):
        if corruption is None or spec is None:
            out.append(call)
            continue
        out.append(_apply(call, spec, corruption))
        notes.append(f"{corruption.kind}: call {index} ({call.name}): {corruption.description}")
    return out, notes
