"""What an exporter reads from a run: one `Episode` per GATS turn (the prompt it started from, the tools it
offered, every attempt), and the `Row`s built from it.

Sources (`sources.py`) read run directories into episodes; `rows.py` turns episodes into candidate rows;
`filters.py` keeps or drops rows, each drop with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

RowKind = Literal["sft", "correction", "dpo"]
"""`sft`: one attempt as a conversation; `correction`: attempt → Gecko's feedback → the fix; `dpo`: a pair."""
VerdictSource = Literal["official", "judge"]


@dataclass(frozen=True)
class Call:
    """One tool call of an attempt, as the trace recorded it."""

    call_id: str
    step: int
    name: str
    """The name the model called (its agent-facing name)."""
    arguments: Any
    """The arguments object (None when the model's arguments were not JSON: see `raw_arguments`)."""
    raw_arguments: str | None
    ok: bool
    result: str
    """What the model was shown: the tool's result, or the rejection."""
    errors: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Attempt:
    """One GATS attempt of a turn."""

    index: int
    success: bool | None
    """The judge's verdict (None: not judged, e.g. the attempt errored)."""
    calls: tuple[Call, ...]
    final_text: str | None
    feedback: str | None
    """The feedback Gecko gave before this attempt (None for the first)."""
    remaining: tuple[str, ...] = ()
    """What the judge found still to do after this attempt."""
    messages: tuple[dict[str, Any], ...] | None = None
    """The attempt's messages as recorded (an environment rollout, later user turns included); None: rebuilt
    from the calls."""

    @property
    def rejected_calls(self) -> tuple[Call, ...]:
        """The calls Gecko refused."""
        return tuple(call for call in self.calls if not call.ok)


@dataclass(frozen=True)
class TaskRef:
    """Where an episode comes from, and what it would contaminate."""

    benchmark: str
    run: str
    """The run directory's name."""
    key: str
    """The task's key in the run (`simple_python_3`, `multi_turn_base_1`, an episode id)."""
    group: str
    model: str
    source_task_id: str
    """The task the episode was made on (the benchmark's own id), what a split and contamination go by."""
    contaminates: str | None
    """The benchmark whose test tasks this is (None: a generated task that no benchmark tests on)."""


@dataclass(frozen=True)
class Episode:
    """One turn of one task: the prompt every attempt started from, the tools offered, the attempts."""

    task: TaskRef
    turn: int
    prompt: tuple[dict[str, Any], ...]
    """OpenAI messages before the turn's attempts (system, earlier turns as really executed, the user's turn)."""
    tools: tuple[dict[str, Any], ...]
    """OpenAI function definitions the model was offered."""
    attempts: tuple[Attempt, ...]
    best: int | None
    """Index of the attempt GATS chose (None: none)."""
    official: bool | None = None
    """The benchmark's official verdict on the task (None: the benchmark gives none)."""

    def attempt(self, index: int | None) -> Attempt | None:
        """The attempt with this index, or None."""
        return next((a for a in self.attempts if a.index == index), None) if index is not None else None


@dataclass
class Row:
    """One training example and what the filters and the card need to know about it."""

    kind: RowKind
    episode: Episode
    data: dict[str, Any]
    """The training fields: `messages` (sft, correction) or `prompt`, `chosen`, `rejected` (dpo)."""
    attempt: int
    """The attempt the row trains on (dpo, correction: the chosen fix)."""
    success: bool | None
    verdict_source: VerdictSource | None
    gats: Literal["final", "attempt", "correction"]
    feedback: str | None = None
    rejected_attempt: int | None = None
    rejected_reason: str | None = None
    first_round: bool = False

    def metadata(self) -> dict[str, Any]:
        """The row's metadata columns (flat, JSON-able)."""
        task = self.episode.task
        return {
            "kind": self.kind, "benchmark": task.benchmark, "run": task.run, "task_key": task.key,
            "group": task.group, "model": task.model, "source_task_id": task.source_task_id,
            "contaminates": task.contaminates, "turn": self.episode.turn, "attempt": self.attempt,
            "gats": self.gats, "success": self.success, "verdict_source": self.verdict_source,
            "feedback": self.feedback, "rejected_attempt": self.rejected_attempt,
            "rejected_reason": self.rejected_reason, "first_round": self.first_round,
        }
