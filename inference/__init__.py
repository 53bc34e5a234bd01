"""Client side of Gecko: agents (`inference.agents`), the Gecko HTTP client (`inference.gecko`), the tool
catalog and the one tool-call path (`inference.tools`), and real-tool backends (`inference.real_tools`).

Layering: imports `utils` only; talks to Gecko over HTTP. `gats` and `benchmarks` build on it.
"""
