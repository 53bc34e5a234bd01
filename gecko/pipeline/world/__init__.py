"""The world model of the rules engines: records of the toolkits' resources kept in the session state.

The resources come from the toolkit's shape (`gecko.toolkits.resources`, once at load); here, per call:
`respond` gives the response a bound call has in the current state (the rules synthesizer), `world_change` the
state after it (the rules state updater), `observe` folds a real read's records in (`/update-state-from-real`).
Both sides derive the same new ids from the same seed, so a create's response and the stored record agree.

```
store.py     where records live in a state; known vs unknown collections; find, select (filters, limit)
records.py   what a create/update does to a record, new ids, laying state values over a generated response
respond.py   the response side
apply.py     the state side (new state + RFC 6902 patch)
```
"""

from gecko.pipeline.world.apply import observe, world_change
from gecko.pipeline.world.records import call_seed, is_error_body
from gecko.pipeline.world.respond import WorldAnswer, respond

__all__ = ["WorldAnswer", "call_seed", "is_error_body", "observe", "respond", "world_change"]
