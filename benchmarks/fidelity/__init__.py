"""The fidelity harness: the same calls on real tools and in Gecko, compared step by step (docs/guides/fidelity.md).

Sources of real behaviour live with their benchmarks (`benchmarks/bfcl/fidelity.py`,
`benchmarks/taubench/fidelity.py`) and build on `model.py`; `gecko fidelity` is `benchmark.FidelityBenchmark`.
"""
