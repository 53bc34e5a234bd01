"""The state controller's policy engine (after ToolGym): seeded, declarative fault, drift and constraint
policies, one implementation for Gecko's pipeline and for the runners' real-tool bridges. See README.md.

```
policy.py    the format (pydantic): FaultPolicy → FaultRule(when: Match, do: an intervention, limit); load_policy
engine.py    decide(policy, state, facts) → Injection | None: deterministic (hash of seed, stream, rule, call)
effects.py   what an injection does to an outcome: the service error, corruption, the constraint notice
metrics.py   robustness metrics over call traces: Recovery Rate, Flexibility, Schema Compliance, give-up
profiles/    the shipped profiles: flaky-network, rate-limited, stale-reads, moving-goalposts
```
"""

from utils.faults.effects import (
    NOTICE_KEY,
    SERVICE_ERROR_STATUSES,
    ServiceError,
    constraint_item,
    corrupt,
    corrupt_text,
    notice_text,
    service_error,
    wait_seconds,
    with_notice,
)
from utils.faults.engine import (
    CallFacts,
    Earlier,
    FaultState,
    Injection,
    decide,
    draw,
    needs_earlier,
    needs_state,
    observe,
    state_holds,
)
from utils.faults.policy import (
    BLOCKING_KINDS,
    LEVELS,
    FaultPolicy,
    FaultRule,
    Level,
    PolicyError,
    Side,
    load_policy,
    parse_policy,
    profile_names,
)

__all__ = [
    "BLOCKING_KINDS", "LEVELS", "NOTICE_KEY", "SERVICE_ERROR_STATUSES", "CallFacts", "Earlier", "FaultPolicy",
    "FaultRule", "FaultState", "Injection", "Level", "PolicyError", "ServiceError", "Side", "constraint_item", "corrupt", "corrupt_text",
    "decide", "draw", "load_policy", "needs_earlier", "needs_state", "notice_text", "observe", "parse_policy",
    "profile_names", "service_error", "state_holds", "wait_seconds", "with_notice",
]
