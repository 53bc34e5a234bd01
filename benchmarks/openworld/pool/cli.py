"""`gecko pool build`: build the open-world tool pool from its pinned sources (what `make pool` runs)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.openworld.pool.build import PoolBuildError, build_pool
from benchmarks.openworld.pool.spec import DEFAULT_SOURCES, SOURCE_KINDS, load_sources
from utils.paths import DATA_DIR, REPO_ROOT, default_cache_dir, is_checkout

DEFAULT_OUT = DATA_DIR / "pool"
DEFAULT_CACHE = REPO_ROOT / ".pool-cache" if is_checkout() else default_cache_dir() / "pool"


def build_parser() -> argparse.ArgumentParser:
    """`gecko pool build` flags."""
    parser = argparse.ArgumentParser(prog="gecko pool", description="Build the open-world tool pool.")
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="build the pool from its pinned sources")
    build.add_argument("--sources", type=Path, default=DEFAULT_SOURCES,
                       help="the pinned sources file (default: the one shipped beside the pool build)")
    build.add_argument("--out", type=Path, default=DEFAULT_OUT,
                       help=f"pool directory: toolkits/ and manifest.json (default: {DEFAULT_OUT})")
    build.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                       help=f"npm tarballs and installed MCP servers, reused between builds (default: {DEFAULT_CACHE})")
    build.add_argument("--data-dir", type=Path, default=DATA_DIR,
                       help=f"where `gecko toolkits` wrote the BFCL multi-turn toolkits (default: {DATA_DIR})")
    build.add_argument("--only", action="append", choices=SOURCE_KINDS, metavar="KIND",
                       help=f"include only this kind of source (repeatable; default all: {', '.join(SOURCE_KINDS)})")
    build.add_argument("--no-dense", dest="dense", action="store_false",
                       help="leave the tool embeddings out of the search index (a server embeds the pool on its "
                            "first dense or hybrid search)")
    build.add_argument("--search-cache", type=Path, default=default_cache_dir() / "search",
                       help="the tool embedding cache the build reads and extends (the server's default "
                            "--search-cache-dir, so a rebuild embeds only new tools)")
    build.add_argument("--json", action="store_true", help="print the counts as JSON instead of a table")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `gecko pool …`; returns the exit code (0 built, 1 a source or the build failed, 2 bad arguments)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="gecko pool: %(message)s")
    try:
        sources = load_sources(args.sources)
        manifest = build_pool(sources, args.out, data_dir=args.data_dir, cache=args.cache,
                              only=args.only or SOURCE_KINDS, dense=args.dense, search_cache=args.search_cache)
    except (ValueError, PoolBuildError) as exc:
        print(f"gecko pool: error: {exc}", file=sys.stderr)
        return 1
    counts = manifest["counts"]
    if args.json:
        print(json.dumps({k: v for k, v in manifest.items() if k != "tools"}, indent=1))
        return 0
    print(f"{'source':<18} {'tools':>6} {'apps':>5} {'toolkits':>8} {'read':>6} {'write':>6}")
    for name, row in counts["by_source"].items():
        print(f"{name:<18} {row['tools']:>6} {row['apps']:>5} {row['toolkits']:>8} {row['read']:>6} {row['write']:>6}")
    print(f"{'total':<18} {counts['tools']:>6} {counts['apps']:>5} {counts['toolkits']:>8} {counts['read']:>6} "
          f"{counts['write']:>6}")
    print(f"duplicates dropped: {manifest['duplicates_dropped']}; rejected: {len(manifest['rejected'])}; "
          f"{manifest['build_seconds']}s")
    for item in manifest["rejected"]:
        what = f"{item['toolkit']}/{item['tool']}" if "tool" in item else item["toolkit"]
        print(f"  rejected {what} ({item['origin']}): {item['problem']}")
    index = manifest["index"]
    print(f"search index: {index['tools']} tools, " + (f"embedded by {index['dense']} ({index['embedded']} now)"
                                                       if index["dense"] else f"no embeddings ({index['dense_missing']})")
          + f"; {index['seconds']}s")
    print(f"pool: {args.out / 'toolkits'} (serve: gecko serve --schemas-dir {args.out / 'toolkits'})")
    return 0
