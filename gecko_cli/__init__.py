"""`gecko`: the one command line of the project (see `main.py`).

This package is the top layer: it may import everything below it (`benchmarks`, `gats`, `inference`, `gecko`,
`utils`) and nothing imports it. It holds only dispatch; each command lives with the code it runs.
"""
