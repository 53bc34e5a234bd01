"""`gecko twin capture|learn`: record a real MCP server's answers, then teach its twin what they show.

```
gecko twin capture --server 'CMD ARGS…' --calls CALLS.jsonl -o captures.jsonl
gecko twin capture --gecko URL --session ID [--toolkit twin.json] -o captures.jsonl
gecko twin learn twin.json --captures captures.jsonl [-o learned.json] [--max-calls 200] [--model ALIAS]
```

Exit status: 0 done, 1 a capture or learning error (message on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from gecko.convert.document import dump_document, write_document
from gecko.convert.mcp_server import parse_command
from gecko.convert.model import ConversionError
from gecko.twin.capture import (
    CaptureError,
    capture_calls,
    from_history,
    read_calls,
    read_captures,
    write_captures,
)
from gecko.twin.learn import learn_toolkit


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gecko twin (python -m gecko.twin)", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    capture = commands.add_parser("capture", help="record real calls: replay a call file on a server, or export a "
                                                  "hybrid/passthrough session's real calls")
    capture.add_argument("--server", metavar="'CMD ARGS…'", help="start this MCP server over stdio (official SDK)")
    capture.add_argument("--calls", type=Path, help="with --server: the calls to make (JSON Lines of {tool, arguments}; "
                                                    "'{{N.path}}' in an argument is that value of call N's result)")
    capture.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole replay (default 300)")
    capture.add_argument("--gecko", metavar="URL", help="a Gecko server whose session made real calls")
    capture.add_argument("--session", help="with --gecko: the session id (mode hybrid or passthrough)")
    capture.add_argument("--toolkit", type=Path, help="with --gecko: the twin's toolkit, to name tools as the server does")
    capture.add_argument("-o", "--output", type=Path, required=True, help="captures file (JSON Lines)")
    learn = commands.add_parser("learn", help="write what captures show into a twin's toolkit")
    learn.add_argument("toolkit", type=Path, help="the twin's toolkit (from `gecko convert mcp`)")
    learn.add_argument("--captures", type=Path, action="append", required=True, help="captures file; repeatable")
    learn.add_argument("--max-calls", type=int, default=0, help="learn from the first N captures only (0: all)")
    learn.add_argument("--model", help="LLM alias that infers result schemas of tools no capture covers")
    learn.add_argument("--cache-dir", type=Path, help="with --model: cache of inferred schemas")
    learn.add_argument("-o", "--output", type=Path, help="learned toolkit (default: stdout)")
    return parser


def _capture(args: argparse.Namespace) -> str:
    if args.server is not None:
        if args.calls is None or args.gecko is not None:
            raise CaptureError("--server needs --calls (and no --gecko)")
        calls = read_calls(args.calls)
        captures = asyncio.run(capture_calls(parse_command(args.server), calls, timeout=args.timeout))
    elif args.gecko is not None:
        if not args.session:
            raise CaptureError("--gecko needs --session ID")
        names: dict[str, str] = {}
        if args.toolkit is not None:
            doc = json.loads(args.toolkit.read_text(encoding="utf-8"))
            names = {str(op.get("operationId")): str(op.get("x-gecko-original-name") or op.get("operationId"))
                     for item in (doc.get("paths") or {}).values() for op in item.values() if isinstance(op, dict)}
        reply = httpx.get(f"{args.gecko.rstrip('/')}/sessions/{args.session}/history", timeout=60)
        if reply.status_code != 200:
            raise CaptureError(f"{args.gecko}: session {args.session}: HTTP {reply.status_code}: {reply.text[:200]}")
        captures = from_history(reply.json().get("calls") or [], names)
    else:
        raise CaptureError("give --server CMD --calls FILE, or --gecko URL --session ID")
    write_captures(captures, args.output)
    outcomes = {o: sum(c.outcome == o for c in captures) for o in ("ok", "error", "rejected")}
    return f"captured {len(captures)} call(s) ({', '.join(f'{k} {v}' for k, v in outcomes.items())}) to {args.output}"


def _inferrer(args: argparse.Namespace) -> Any:
    if not args.model:
        return None
    from gecko.convert.cli import _inferrer as convert_inferrer

    return convert_inferrer(argparse.Namespace(model=args.model, cache_dir=args.cache_dir, strict=False))


def _learn(args: argparse.Namespace) -> str:
    try:
        doc = json.loads(args.toolkit.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CaptureError(f"{args.toolkit}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("paths"), dict):
        raise CaptureError(f"{args.toolkit}: not a toolkit (an OpenAPI document from `gecko convert mcp`)")
    captures = [c for path in args.captures for c in read_captures(path)]
    if args.max_calls > 0:
        captures = captures[: args.max_calls]
    learned, report = learn_toolkit(doc, captures, inferrer=_inferrer(args))
    if args.output is None:
        sys.stdout.write(dump_document(learned))
    else:
        write_document(learned, args.output)
    lines = [f"learned from {report.calls} call(s):"]
    lines += [f"  {tool}: {', '.join(what)}" for tool, what in sorted(report.tools.items())]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `gecko twin`; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        message = _capture(args) if args.command == "capture" else _learn(args)
    except (CaptureError, ConversionError, OSError, httpx.HTTPError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(message, file=sys.stderr)
    return 0
