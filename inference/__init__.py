"""Client side of Gecko: agents (`inference.agents`), the Gecko HTTP client (`inference.gecko`), the tool
catalog, the one tool-call path and the interface of real tools (`inference.tools`).

Layering: imports `utils` only; talks to Gecko over HTTP. `gats` and `benchmarks` build on it.
"""
