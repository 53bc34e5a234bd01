"""Stream a dataset through the verifier: chunks of lines go to worker processes, results come back in
input order and are appended to the result file (and, with `keep`, the kept lines to the filtered file).

Nothing is loaded whole except a BFCL possible-answer file (an id → answer index). Each finished chunk
is flushed before the next is written, so a crash or Ctrl-C loses no finished result; `resume`
counts the complete result lines already written, drops a torn last line, skips that many input lines
and rebuilds the summary from what is there.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from gecko.pipeline.engines import build_engines, close_engines
from gecko.verify.replay import Verifier
from gecko.verify.samples import Format, read_sample
from gecko.verify.summary import Summary
from utils.settings import Settings

Keep = Literal["valid", "invalid"]
CHUNK = 64
"""Lines per unit of work sent to a worker process."""


class VerifyError(ValueError):
    """A run that cannot start (bad paths, a result file that exists without --resume or --force)."""


@dataclass
class VerifyOptions:
    """One run. `output` None writes results to stdout (no resume)."""

    input: Path | None
    """JSON Lines dataset (None: stdin)."""
    output: Path | None
    settings: Settings
    format: Format | None = None
    answers: Path | None = None
    keep: Keep | None = None
    kept: Path | None = None
    workers: int = 1
    concurrency: int = 16
    """Samples in flight per worker (they overlap only while waiting for a model)."""
    resume: bool = False
    force: bool = False
    limit: int | None = None
    progress: bool = False


class _Worker:
    """The state of one worker process: its event loop, engines and verifier."""

    def __init__(self, settings: Settings, fmt: Format | None, answers: dict[str, Any], concurrency: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.engines = build_engines(settings)
        self.verifier = Verifier(self.engines)
        self.format, self.answers, self.concurrency = fmt, answers, concurrency

    def run(self, chunk: list[tuple[int, str]]) -> list[dict[str, Any]]:
        return self.loop.run_until_complete(self._run(chunk))

    async def _run(self, chunk: list[tuple[int, str]]) -> list[dict[str, Any]]:
        gate = asyncio.Semaphore(self.concurrency)

        async def one(index: int, line: str) -> dict[str, Any]:
            async with gate:
                return await self.verifier.verify(read_sample(line, index, self.format, self.answers))

        return list(await asyncio.gather(*(one(i, line) for i, line in chunk)))

    def close(self) -> None:
        self.loop.run_until_complete(close_engines(self.engines))
        self.loop.close()


_worker: _Worker | None = None
"""The worker of this process (set by the pool initializer; each process has its own)."""


def _init_worker(settings: Settings, fmt: Format | None, answers: dict[str, Any], concurrency: int) -> None:
    global _worker  # noqa: PLW0603 - one worker object per pool process, the pool's documented pattern
    _worker = _Worker(settings, fmt, answers, concurrency)


def _run_chunk(chunk: list[tuple[int, str]]) -> list[dict[str, Any]]:
    assert _worker is not None
    return _worker.run(chunk)


def load_answers(path: Path | None) -> dict[str, Any]:
    """A BFCL possible-answer file (JSON Lines `{id, ground_truth}`) as id → ground truth."""
    if path is None:
        return {}
    answers: dict[str, Any] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    entry = json.loads(line)
                    answers[str(entry["id"])] = entry["ground_truth"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise VerifyError(f"{path}:{number}: not a possible-answer line ({exc!r})") from None
    return answers


def _input_lines(handle: IO[str], skip: int) -> Iterator[tuple[int, str]]:
    numbered = ((i, line.rstrip("\n")) for i, line in enumerate(handle))
    return ((i, line) for i, line in itertools.islice(numbered, skip, None) if line.strip())


def _chunks(lines: Iterable[tuple[int, str]], size: int) -> Iterator[list[tuple[int, str]]]:
    iterator = iter(lines)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _kept(result: dict[str, Any], keep: Keep | None) -> bool:
    return keep is not None and (result["verdict"] == "valid") == (keep == "valid")


def _resume_state(options: VerifyOptions, summary: Summary) -> tuple[int, int]:
    """(input lines done, kept lines written) from the result file; torn last lines are cut off."""
    assert options.output is not None
    done = kept = 0
    last_line = -1
    good_bytes = 0
    with options.output.open("rb") as handle:
        for raw in handle:  # complete lines up to the first torn or unreadable one
            if not raw.endswith(b"\n"):
                break
            try:
                result = json.loads(raw)
            except ValueError:
                break
            good_bytes += len(raw)
            summary.add(result)
            done += 1
            last_line = int(result.get("line", last_line))
            kept += _kept(result, options.keep)
    os.truncate(options.output, good_bytes)
    if options.keep and options.kept is not None:
        _rewrite_kept(options, last_line + 1)
    return last_line + 1, kept


def _rewrite_kept(options: VerifyOptions, lines: int) -> None:
    """Write the kept file again from the input's first `lines` lines and the results (it may lag or be torn)."""
    assert options.output is not None and options.kept is not None
    if options.input is None:
        raise VerifyError("--resume with --keep needs the input as a file, not stdin")
    with options.output.open(encoding="utf-8") as done, options.input.open(encoding="utf-8") as source, \
            options.kept.open("w", encoding="utf-8") as kept:
        verdicts = ((int(r["line"]), r) for r in map(json.loads, done))
        wanted = next(verdicts, None)
        for index, line in enumerate(itertools.islice(source, lines)):
            while wanted is not None and wanted[0] < index:
                wanted = next(verdicts, None)
            if wanted is not None and wanted[0] == index and _kept(wanted[1], options.keep):
                kept.write(line.rstrip("\n") + "\n")


def kept_path(options: VerifyOptions) -> Path | None:
    """Where kept lines go: `--kept`, else next to the result file (`<stem>.<keep>.jsonl`)."""
    if options.keep is None:
        return None
    if options.kept is not None:
        return options.kept
    if options.output is None:
        raise VerifyError("--keep needs --kept FILE when results go to stdout")
    return options.output.with_name(f"{options.output.stem}.{options.keep}.jsonl")


def verify_dataset(options: VerifyOptions) -> dict[str, Any]:
    """Verify a dataset; returns the summary (also written to `<output>.summary.json`).

    Raises:
        VerifyError: the run cannot start.
    """
    options.kept = kept_path(options)
    if options.input is not None and not options.input.is_file():
        raise VerifyError(f"{options.input}: no such file")
    answers = load_answers(options.answers)
    summary = Summary()
    skip = kept_count = 0
    if options.output is not None and options.output.exists() and options.output.stat().st_size:
        if options.resume:
            skip, kept_count = _resume_state(options, summary)
        elif not options.force:
            raise VerifyError(f"{options.output} exists: --resume to continue it or --force to start again")
    elif options.resume and options.output is None:
        raise VerifyError("--resume needs -o FILE")
    started = time.perf_counter()
    before = summary.samples
    with contextlib.ExitStack() as stack:
        out = sys.stdout if options.output is None else stack.enter_context(_open_out(options.output, options.resume))
        kept = None if options.kept is None else stack.enter_context(_open_out(options.kept, options.resume))
        source = sys.stdin if options.input is None else stack.enter_context(options.input.open(encoding="utf-8"))
        lines: Iterable[tuple[int, str]] = _input_lines(source, skip)
        if options.limit is not None:
            lines = itertools.islice(lines, max(0, options.limit - summary.samples))
        bar = _progress(options.progress, summary.samples)
        try:
            for chunk, results in _results(options, answers, _chunks(lines, CHUNK)):
                for (index, line), result in zip(chunk, results, strict=True):
                    result["line"] = index
                    out.write(json.dumps(result, ensure_ascii=False, default=str) + "\n")
                    summary.add(result)
                    if kept is not None and _kept(result, options.keep):
                        kept.write(line + "\n")
                        kept_count += 1
                out.flush()
                if kept is not None:
                    kept.flush()
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
    elapsed = time.perf_counter() - started
    public = {**summary.public(), "kept": kept_count if options.keep else None,
              "run": {"samples_this_run": summary.samples - before, "seconds": round(elapsed, 3),
                      "samples_per_s": round((summary.samples - before) / elapsed, 1) if elapsed else None,
                      "workers": options.workers}}
    if options.output is not None:
        options.output.with_name(options.output.name + ".summary.json").write_text(
            json.dumps(public, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return public


def _results(options: VerifyOptions, answers: dict[str, Any], chunks: Iterator[list[tuple[int, str]]],
             ) -> Iterator[tuple[list[tuple[int, str]], list[dict[str, Any]]]]:
    init = (options.settings, options.format, answers, options.concurrency)
    if options.workers <= 1:
        worker = _Worker(*init)
        try:
            for chunk in chunks:
                yield chunk, worker.run(chunk)
        finally:
            worker.close()
        return
    with ProcessPoolExecutor(options.workers, initializer=_init_worker, initargs=init) as pool:
        pending: deque[tuple[list[tuple[int, str]], Future[list[dict[str, Any]]]]] = deque()
        try:
            for chunk in chunks:
                pending.append((chunk, pool.submit(_run_chunk, chunk)))
                while len(pending) >= options.workers * 4:
                    done_chunk, future = pending.popleft()
                    yield done_chunk, future.result()
            while pending:
                done_chunk, future = pending.popleft()
                yield done_chunk, future.result()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _open_out(path: Path, append: bool) -> IO[str]:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("a" if append else "w", encoding="utf-8")


def _progress(enabled: bool, initial: int) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(initial=initial, unit="sample", file=sys.stderr, dynamic_ncols=True)
