"""`python -m gecko.convert KIND INPUT… [options]`: argparse → one library call → files.

Exit status: 0 done, 1 conversion error (message on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gecko.convert.api import from_bfcl, from_callables, from_mcp, from_openai, from_xlam
from gecko.convert.bfcl import bfcl_functions
from gecko.convert.document import dump_document, write_document
from gecko.convert.infer import ResponseInferrer
from gecko.convert.mcp import mcp_tool_list
from gecko.convert.mcp_server import list_server_tools, parse_command, upstream_of
from gecko.convert.model import ACCESS_KINDS, Access, ConversionError
from gecko.convert.openai_tools import openai_functions
from gecko.convert.xlam import unique_functions, xlam_functions
from gecko.toolkits.loader import slugify

KINDS = ("openai", "bfcl", "mcp", "xlam", "python")
ENTRY_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gecko.convert",
        description="Convert tool definitions into an OpenAPI 3.1 toolkit that the Gecko server loads.",
    )
    parser.add_argument("kind", choices=KINDS, help="input format")
    parser.add_argument(
        "inputs", nargs="*", metavar="INPUT",
        help="JSON or JSON Lines files ('-' reads stdin); for 'python': module:function, module:Class.method "
             "or module:* (every public function defined in the module)",
    )
    parser.add_argument(
        "--server", metavar="'CMD ARGS…'",
        help="mcp only: start this MCP server on stdio (official SDK client), list its tools and convert them; "
             "the toolkit records the command as its upstream (x-gecko-upstream) for hybrid sessions",
    )
    parser.add_argument("--server-timeout", type=float, default=60.0,
                        help="seconds the --server may take to start and list its tools (default 60)")
    parser.add_argument("-o", "--output", type=Path, help="output file (default: stdout); a directory with --per-entry")
    parser.add_argument("--title", help="info.title (default: the first input's file stem or module name)")
    parser.add_argument("--description", default="", help="info.description")
    parser.add_argument("--version", default="1.0.0", help="info.version (default: 1.0.0)")
    parser.add_argument(
        "--access", action="append", default=[], metavar="TOOL=read|write",
        help="declare a tool's read/write kind (x-gecko-access); repeatable",
    )
    parser.add_argument(
        "--per-entry", action="store_true",
        help="bfcl only: one toolkit per task entry ({id, function}), written as OUTPUT/<id>.json",
    )
    parser.add_argument("--model", help="LLM alias used to infer result schemas the source does not declare")
    parser.add_argument("--cache-dir", type=Path, help="cache of inferred schemas (default: <state dir>/convert-cache)")
    parser.add_argument("--strict", action="store_true", help="with --model: fail instead of using the generic schema")
    parser.add_argument("--no-validate", action="store_true", help="skip the openapi-spec-validator check")
    return parser


def _read_json(source: str) -> Any:
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise ConversionError(f"{source}: neither JSON nor JSON Lines: {exc}") from None


def _resolve_callables(reference: str) -> list[Callable[..., Any]]:
    module_name, sep, attr = reference.partition(":")
    if not sep or not attr:
        raise ConversionError(f"{reference!r}: expected module:function, module:Class.method or module:*")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConversionError(f"{reference!r}: cannot import {module_name!r}: {exc}") from None
    if attr == "*":
        return [
            obj for name, obj in vars(module).items()
            if not name.startswith("_") and inspect.isfunction(obj) and obj.__module__ == module.__name__
        ]
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConversionError(f"{reference!r}: {module_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if inspect.isclass(obj) or not callable(obj):
        raise ConversionError(f"{reference!r} is not a function or method")
    return [obj]


def _access_map(pairs: Sequence[str]) -> dict[str, Access]:
    access: dict[str, Access] = {}
    for pair in pairs:
        name, _, kind = pair.rpartition("=")
        if not name or kind not in ACCESS_KINDS:
            raise ConversionError(f"--access {pair!r}: expected TOOL=read or TOOL=write")
        access[name] = kind
    return access


def _inferrer(args: argparse.Namespace) -> ResponseInferrer | None:
    if not args.model:
        return None
    from gecko.convert.llm import llm_infer
    from utils.llm import LLMError

    try:
        infer = llm_infer(args.model)
    except LLMError as exc:
        raise ConversionError(f"--model {args.model}: {exc}") from None
    cache_dir = args.cache_dir
    if cache_dir is None:
        from utils.settings import Settings

        cache_dir = Settings().state_dir / "convert-cache"
    return ResponseInferrer(infer, model=args.model, cache_dir=cache_dir, strict=args.strict)


def _default_title(args: argparse.Namespace) -> str:
    if not args.inputs:
        return "toolkit"
    first = args.inputs[0]
    if args.kind == "python":
        return first.partition(":")[0]
    return "toolkit" if first == "-" else Path(first).stem


def convert(args: argparse.Namespace, inferrer: ResponseInferrer | None) -> list[tuple[Path | None, dict[str, Any]]]:
    """The documents the parsed command line asks for, with where each goes (None: stdout)."""
    options: dict[str, Any] = {
        "description": args.description, "version": args.version, "access": _access_map(args.access),
        "inferrer": inferrer, "validate": not args.no_validate,
    }
    if args.server is not None:
        return [(args.output, _from_server(args, options))]
    if not args.inputs:
        raise ConversionError(f"{args.kind}: give at least one INPUT" + (" (or --server)" if args.kind == "mcp" else ""))
    title = args.title or _default_title(args)
    if args.kind == "python":
        funcs = [f for ref in args.inputs for f in _resolve_callables(ref)]
        return [(args.output, from_callables(funcs, title=title, **options))]
    data = [_read_json(source) for source in args.inputs]
    if args.per_entry:
        if args.kind != "bfcl" or args.output is None:
            raise ConversionError("--per-entry needs the bfcl kind and an output directory (-o)")
        entries = [e for d in data for e in (d if isinstance(d, list) else [d])]
        if not all(isinstance(e, dict) and isinstance(e.get("id"), str) and ENTRY_ID.match(e["id"]) for e in entries):
            raise ConversionError("--per-entry: every entry needs an 'id' usable as a file name ([A-Za-z0-9_.-])")
        return [(args.output / f"{e['id']}.json", from_bfcl(e, title=e["id"], **options)) for e in entries]
    if args.kind == "openai":
        return [(args.output, from_openai([f for d in data for f in openai_functions(d)], title=title, **options))]
    if args.kind == "xlam":
        return [(args.output, from_xlam(unique_functions([t for d in data for t in xlam_functions(d)]), title=title, **options))]
    if args.kind == "mcp":
        return [(args.output, from_mcp([t for d in data for t in mcp_tool_list(d)], title=title, **options))]
    return [(args.output, from_bfcl([f for d in data for f in bfcl_functions(d)], title=title, **options))]


def _from_server(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    if args.kind != "mcp" or args.inputs:
        raise ConversionError("--server works with the mcp kind and no INPUT files")
    argv = parse_command(args.server)
    found = asyncio.run(list_server_tools(argv, timeout=args.server_timeout))
    title = args.title or slugify(found.name) or "toolkit"
    description = args.description or found.instructions or f"Simulated twin of the MCP server {found.name}"
    return from_mcp(found.tools, title=title, **{**options, "description": description},
                    info_extensions={"x-gecko-upstream": upstream_of(argv),
                                     "x-gecko-source": {"mcp_server": found.name, "version": found.version}})


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        inferrer = _inferrer(args)
        outputs = convert(args, inferrer)
        for path, doc in outputs:
            if path is None:
                sys.stdout.write(dump_document(doc))
            else:
                write_document(doc, path)
    except (ConversionError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if len(outputs) > 1 or outputs[0][0] is not None:
        print(f"wrote {len(outputs)} toolkit(s)", file=sys.stderr)
    if inferrer is not None and inferrer.failures:
        print(
            f"warning: no result schema could be inferred for {len(inferrer.failures)} tool(s), which keep the "
            f"generic one: {', '.join(sorted(set(inferrer.failures)))}", file=sys.stderr,
        )
    return 0
