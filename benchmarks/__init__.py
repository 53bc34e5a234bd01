"""Benchmark plugins (BFCL, tau2-bench): loaders, runtimes, exporters and evaluators over official scoring."""
