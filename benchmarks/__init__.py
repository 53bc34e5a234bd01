"""Benchmarks (BFCL, tau2-bench) on one runner: `runner/` (the loop every benchmark runs on), `registry.py` (name →
benchmark), and one package per benchmark with its loaders, runtimes, exporters and official scoring."""
