"""The written forms of the kept rows, each split into train and validation by task.

| format     | files                                   | one line                                                    |
|------------|-----------------------------------------|-------------------------------------------------------------|
| `openai`   | `openai/{train,validation}.jsonl`       | `{"messages", "tools", "metadata"}`: OpenAI chat with tools (TRL's conversational SFT; arguments as JSON text) |
| `sharegpt` | `sharegpt/{train,validation}.jsonl`     | `{"conversations": [{"from", "value"}], "system", "tools"}` (human, gpt, function_call, observation; `tools` as JSON text) |
| `dpo`      | `dpo/{train,validation}.jsonl`          | `{"prompt", "chosen", "rejected", "tools", "metadata"}`: TRL's conversational preference format |
| `hf`       | `hf/{sft,dpo}/` (`load_from_disk`), `parquet/{sft,dpo}-{split}.parquet` | the same rows as columns; `tools` as JSON text (TRL reads it so), metadata as flat columns |

SFT rows (`sft` and `correction`) go to `openai`, `sharegpt` and `hf/sft`; pairs to `dpo` and `hf/dpo`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.data_export.model import Row

FORMATS = ("openai", "sharegpt", "dpo", "hf")
SPLITS = ("train", "validation")


def split_of(row: Row, validation_fraction: float, seed: int = 0) -> str:
    """`train` or `validation`, from the row's source task alone: every row of a task lands in the same split
    (across runs and models too)."""
    task = row.episode.task
    digest = hashlib.sha256(f"{seed}:{task.benchmark}:{task.source_task_id}".encode()).digest()
    return "validation" if int.from_bytes(digest[:8], "big") / 2**64 < validation_fraction else "train"


def openai_row(row: Row) -> dict[str, Any]:
    """An SFT row as OpenAI chat with tools."""
    return {"messages": row.data["messages"], "tools": list(row.episode.tools), "metadata": row.metadata()}


def dpo_row(row: Row) -> dict[str, Any]:
    """A pair in TRL's conversational preference format."""
    return {"prompt": row.data["prompt"], "chosen": row.data["chosen"], "rejected": row.data["rejected"],
            "tools": list(row.episode.tools), "metadata": row.metadata()}


def _function_call(message: Mapping[str, Any]) -> str:
    calls = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])
              if _is_json(c["function"]["arguments"]) else c["function"]["arguments"]}
             for c in message.get("tool_calls") or ()]
    return json.dumps(calls[0] if len(calls) == 1 else calls, ensure_ascii=False)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (TypeError, ValueError):
        return False
    return True


def sharegpt_row(row: Row) -> dict[str, Any]:
    """An SFT row in ShareGPT form (as LLaMA-Factory reads tool use)."""
    system, turns = "", []
    for message in row.data["messages"]:
        role, content = message["role"], message.get("content")
        if role == "system":
            system = str(content or "")
        elif role == "user":
            turns.append({"from": "human", "value": str(content or "")})
        elif role == "tool":
            turns.append({"from": "observation", "value": str(content or "")})
        elif message.get("tool_calls"):
            turns.append({"from": "function_call", "value": _function_call(message)})
        else:
            turns.append({"from": "gpt", "value": str(content or "")})
    return {"conversations": turns, "system": system, "tools": json.dumps(list(row.episode.tools)),
            "metadata": row.metadata()}


def columns(record: dict[str, Any]) -> dict[str, Any]:
    """A record as `datasets` columns: `tools` as JSON text, metadata flat (Arrow needs one type per column)."""
    out = {key: value for key, value in record.items() if key not in ("tools", "metadata")}
    out["tools"] = json.dumps(record["tools"], ensure_ascii=False)
    out.update(record["metadata"])
    return out


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> int:
    """Write JSON Lines; returns the number of lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_hf(out: Path, name: str, splits: Mapping[str, list[dict[str, Any]]]) -> None:
    """`hf/<name>/` (a DatasetDict, `datasets.load_from_disk`) and `parquet/<name>-<split>.parquet`.

    Raises:
        ImportError: the `data` extra (`datasets`) is not installed.
    """
    import datasets

    datasets.disable_progress_bars()
    present = {split: rows for split, rows in splits.items() if rows}
    if not present:
        return
    dataset = datasets.DatasetDict({split: datasets.Dataset.from_list([columns(r) for r in rows])
                                    for split, rows in present.items()})
    dataset.save_to_disk(str(out / "hf" / name))
    (out / "parquet").mkdir(parents=True, exist_ok=True)
    for split, data in dataset.items():
        data.to_parquet(str(out / "parquet" / f"{name}-{split}.parquet"))
