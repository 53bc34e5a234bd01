"""`python -m utils.llm_stub --port P`: run the OpenAI-compatible stub server.

With `--port 0` the OS picks a free port; the first line on stdout is always
`READY http://HOST:PORT/v1`, printed once the socket listens, for scripts to read.
"""

from __future__ import annotations

import argparse
import socket
import sys

import uvicorn

from utils.llm_stub.app import create_app
from utils.llm_stub.config import FAULT_KINDS, FaultRates, StubConfig, load_plans, parse_latency


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m utils.llm_stub", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--latency-ms", default="0", help="fixed N or uniform LOW-HIGH milliseconds per request")
    parser.add_argument("--seed", type=int, default=0, help="seed of fault and latency draws")
    parser.add_argument("--fault-rate", type=float, default=0.0,
                        help="total fault rate split evenly over the five kinds (overridden per kind below)")
    for kind in FAULT_KINDS:
        parser.add_argument(f"--fault-{kind.replace('_', '-')}", type=float, default=None, dest=f"fault_{kind}",
                            help=f"rate of '{kind}' faults")
    parser.add_argument("--retry-after", type=float, default=1.0, help="Retry-After seconds sent with 429s")
    parser.add_argument("--hang-s", type=float, default=30.0, help="how long an injected timeout holds a request")
    parser.add_argument("--script", help="JSON file of planner plans: {\"plans\": [{\"match\", \"steps\"}]}")
    parser.add_argument("--models", default="stub", help="comma-separated names listed by /v1/models")
    parser.add_argument("--strict-models", action="store_true", help="404 for a model not in --models")
    parser.add_argument("--api-key", default=None, help="require this bearer key (401 otherwise)")
    parser.add_argument("--no-tools", action="store_true", help="400 for a request with tools (no tool calling)")
    parser.add_argument("--log-level", default="warning")
    return parser


def config_from_args(args: argparse.Namespace) -> StubConfig:
    """Turn parsed flags into a `StubConfig`."""
    base = FaultRates.uniform(args.fault_rate) if args.fault_rate else FaultRates()
    rates = {kind: getattr(base, kind) for kind in FAULT_KINDS}
    for kind in FAULT_KINDS:
        value = getattr(args, f"fault_{kind}")
        if value is not None:
            rates[kind] = value
    return StubConfig(
        latency_ms=parse_latency(args.latency_ms), faults=FaultRates(**rates), seed=args.seed,
        retry_after_s=args.retry_after, hang_s=args.hang_s, plans=load_plans(args.script) if args.script else [],
        models=tuple(m.strip() for m in args.models.split(",") if m.strip()) or ("stub",),
        strict_models=args.strict_models, api_key=args.api_key, tools=not args.no_tools,
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = config_from_args(args)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(2048)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"READY http://{shown}:{port}/v1", flush=True)
    server = uvicorn.Server(uvicorn.Config(create_app(config), log_level=args.log_level, access_log=False,
                                           timeout_graceful_shutdown=1))
    server.run(sockets=[sock])  # loop "auto": uvloop when installed (plain asyncio adds ~40 ms per reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
