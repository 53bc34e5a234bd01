"""A local OpenAI-compatible server that fabricates deterministic, schema-valid replies for tests and benchmarks.

Run it with `python -m utils.llm_stub --port P`, or in-process with `utils.llm_stub.testing.run_stub`.
"""

from utils.llm_stub.config import FAULT_KINDS, FaultRates, StubConfig

__all__ = ["FAULT_KINDS", "FaultRates", "StubConfig"]
