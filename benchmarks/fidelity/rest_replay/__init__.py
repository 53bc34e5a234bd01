"""Fidelity against real REST servers nobody here wrote: the same seeded calls on the real server and on Gecko.

```
contract.py         what the OpenAPI document says: collections, success statuses, server-owned fields, list params
calls.py            seeded sequences by creation order: every operation, valid/invalid, existing/missing ids
backends.py         json-server and temba (npm, pinned in .npm-tools), on loopback, emptied through their API
replay.py           one side (real server or a Gecko session): refs resolved to its own ids, answers observed
measures.py         the figures per class, and the same checks on the real server's answers
harness.py          `run(ReplayConfig)`: both servers, every sequence, one JSON object
temba_server.mjs    starts temba on 127.0.0.1 with the document's body schemas
```

`perf/rest_fidelity.py` is the command line; `tests/fidelity/test_rest_fidelity.py` runs it small.
"""

from benchmarks.fidelity.rest_replay.backends import BACKENDS, BackendUnavailable
from benchmarks.fidelity.rest_replay.harness import ReplayConfig, run

__all__ = ["BACKENDS", "BackendUnavailable", "ReplayConfig", "run"]
