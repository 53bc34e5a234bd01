"""The open world: a pool of thousands of real tool definitions that Gecko serves and searches at once.

`benchmarks.openworld.pool` builds the pool (`gecko pool build`, `make pool`) from pinned sources: the BFCL data,
the tau2 domain tools, GitHub's REST description, public OpenAPI descriptions and the tool lists of real MCP
servers from the npm registry.
"""
