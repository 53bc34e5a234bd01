"""Episodes → candidate rows.

- `sft` (`--gats final`): the prompt, then the attempt GATS chose, as if made at once (the feedback that led to it
  is left out: the row teaches the right action, not the retry). `--gats all`: every attempt, each with its own
  verdict.
- `correction` (`--gats corrections`, and `all`): the prompt, the attempt before the chosen one, Gecko's feedback
  on it as the next user message (what GATS really sent), then the chosen attempt: attempt → feedback → fix.
- `dpo`: for the same prompt, each attempt the judge failed before the chosen one (`rejected`) against the chosen
  attempt (`chosen`), in TRL's conversational preference format; Gecko's feedback and why it was rejected are
  metadata.

A row's verdict is the benchmark's official one where the benchmark gives one (only the chosen attempt was
scored officially), else Gecko's judge on that attempt.
"""

from __future__ import annotations

from typing import Any, Literal

from benchmarks.data_export.conversation import attempt_messages, uniquely_identified
from benchmarks.data_export.model import Attempt, Episode, Row, VerdictSource

GatsSelection = Literal["corrections", "final", "all"]


def verdict(episode: Episode, attempt: Attempt) -> tuple[bool | None, VerdictSource | None]:
    """The attempt's verdict and where it comes from (official for the chosen attempt when there is one)."""
    if attempt.index == episode.best and episode.official is not None:
        return episode.official, "official"
    return attempt.success, "judge" if attempt.success is not None else None


def rejection_reason(attempt: Attempt) -> str:
    """Why Gecko or its judge turned the attempt down, in one line."""
    rejected = attempt.rejected_calls
    if rejected:
        first = rejected[0]
        detail = "; ".join(str(e.get("message") or e) for e in first.errors) or first.result
        return f"{len(rejected)} call(s) rejected; {first.name}: {detail}"[:500]
    if attempt.remaining:
        return ("judge: still to do: " + "; ".join(attempt.remaining))[:500]
    return "judge: the task was not done"


def _messages(episode: Episode, attempt: Attempt, first_round: bool) -> list[dict[str, Any]]:
    return [*(dict(m) for m in episode.prompt), *attempt_messages(attempt, first_action_only=first_round)]


def sft_rows(episode: Episode, gats: GatsSelection, first_round: bool) -> list[Row]:
    """The SFT rows of an episode for this `--gats` selection (`first_round`: each ends at its first action)."""
    rows: list[Row] = []
    if gats in ("final", "all"):
        chosen = episode.attempts if gats == "all" else [a for a in (episode.attempt(episode.best),) if a]
        for attempt in chosen:
            success, source = verdict(episode, attempt)
            rows.append(Row("sft", episode, {"messages": _messages(episode, attempt, first_round)}, attempt.index,
                            success, source, "final" if attempt.index == episode.best else "attempt",
                            feedback=attempt.feedback, first_round=first_round))
    if gats in ("corrections", "all"):
        rows += correction_rows(episode)
    return rows


def _corrected(episode: Episode) -> tuple[Attempt, Attempt] | None:
    """The chosen attempt and the one before it, when the chosen one came after a failed attempt."""
    fix = episode.attempt(episode.best)
    before = episode.attempt(episode.best - 1) if episode.best else None
    if fix is None or before is None or before.success is not False or fix.feedback is None:
        return None
    return before, fix


def correction_rows(episode: Episode) -> list[Row]:
    """attempt → feedback → fix (none when the chosen attempt was the first). A correction is never a first
    action: the first-round filter drops it."""
    pair = _corrected(episode)
    if pair is None:
        return []
    before, fix = pair
    messages = [*(dict(m) for m in episode.prompt), *attempt_messages(uniquely_identified(before, f"a{before.index}_")),
                {"role": "user", "content": fix.feedback}, *attempt_messages(fix)]
    success, source = verdict(episode, fix)
    return [Row("correction", episode, {"messages": messages}, fix.index, success, source, "correction",
                feedback=fix.feedback, rejected_attempt=before.index, rejected_reason=rejection_reason(before),
                first_round=False)]


def dpo_rows(episode: Episode, first_round: bool) -> list[Row]:
    """One pair per attempt the judge failed before the chosen attempt."""
    chosen = episode.attempt(episode.best)
    if chosen is None:
        return []
    success, source = verdict(episode, chosen)
    chosen_messages = attempt_messages(chosen, first_action_only=first_round)
    rows = []
    for rejected in episode.attempts:
        if rejected.index >= chosen.index or rejected.success is not False:
            continue
        after = episode.attempt(rejected.index + 1)
        data = {"prompt": [dict(m) for m in episode.prompt], "chosen": chosen_messages,
                "rejected": attempt_messages(rejected, first_action_only=first_round)}
        rows.append(Row("dpo", episode, data, chosen.index, success, source, "correction",
                        feedback=after.feedback if after is not None else None, rejected_attempt=rejected.index,
                        rejected_reason=rejection_reason(rejected), first_round=first_round))
    return rows
