"""`--verified`: every call a row trains on replayed through `gecko verify`'s machinery (`gecko.verify`: the
row's tools converted on the fly, a fresh in-process session, the server's own pipeline, the judge).

What is replayed: an SFT row's conversation; a correction's prompt and fix (the failed attempt before it is
meant to fail); a pair's prompt and chosen side. A row is kept when its verdict is `valid`.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.data_export.conversation import attempt_messages
from benchmarks.data_export.model import Row


def replayed(row: Row) -> dict[str, Any]:
    """The OpenAI-format sample `gecko verify` replays for the row."""
    prompt = [dict(m) for m in row.episode.prompt]
    if row.kind == "dpo":
        messages = [*prompt, *row.data["chosen"]]
    elif row.kind == "correction":
        fix = row.episode.attempt(row.attempt)
        messages = [*prompt, *(attempt_messages(fix) if fix is not None else [])]
    else:
        messages = row.data["messages"]
    return {"messages": messages, "tools": list(row.episode.tools)}


def verify_rows(rows: list[Row], workers: int = 1) -> list[str | None]:
    """Per row, None when `gecko verify` finds it valid, else its verdict (`invalid_call`, `task_failed`, …).

    Raises:
        gecko.verify.run.VerifyError: The verification could not start.
    """
    if not rows:
        return []
    from gecko.verify.run import VerifyOptions, verify_dataset
    from utils.settings import Settings

    with tempfile.TemporaryDirectory(prefix="gecko-data-verify-") as tmp:
        samples, results = Path(tmp) / "rows.jsonl", Path(tmp) / "results.jsonl"
        with samples.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(replayed(row), ensure_ascii=False) + "\n")
        verify_dataset(VerifyOptions(input=samples, output=results, settings=Settings(), format="openai",
                                     workers=workers))
        verdicts: dict[int, str] = {}
        for line in results.read_text(encoding="utf-8").splitlines():
            result = json.loads(line)
            verdicts[int(result["line"])] = str(result.get("verdict"))
    return [None if verdicts.get(index) == "valid" else verdicts.get(index, "untested")
            for index in range(len(rows))]
