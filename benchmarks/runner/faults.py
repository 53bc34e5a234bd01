"""`--faults` on the runners: every selected task runs twice, once clean and once under the fault policy.

```
--faults FILE|PROFILE [--fault-seed N]  → the policy (validated; its JSON form is a result setting of the run)
select: [a, b] → [a, a~faults, b, b~faults]      the fault arm: key `<key>~faults`, group `<group>+faults`
run:    TaskFaults.of(policy, key)                one stream of draws per task and side (`<key>/real`,
                                                  `<key>/simulated`): a rerun or a resume meets the same faults
summary: robustness.py compares the two arms      (accuracy with and without faults, Recovery Rate, …)
```

The clean arm is the ordinary run (its official files are the run's); the fault arm's tasks are scored the same
way and reported in their own groups (`multi_turn_base+faults`), so the table shows both side by side.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.runner.protocol import WorkItem
from utils.faults import FaultPolicy, load_policy, parse_policy, profile_names

FAULT_KEY_SUFFIX = "~faults"
"""Appended to a task's key in the fault arm."""
FAULT_GROUP_SUFFIX = "+faults"
"""Appended to a task's group in the fault arm."""
POLICY_KEY = "fault_policy"
"""A fault-arm task row's field naming the policy (`{name, seed}`)."""


def add_fault_arguments(parser: argparse.ArgumentParser) -> None:
    """`--faults FILE|PROFILE` and `--fault-seed N` (the `state controller` group)."""
    group = parser.add_argument_group("state controller (robustness)")
    group.add_argument("--faults", metavar="FILE|PROFILE", default=None,
                       help="run every task twice, clean and under this fault policy (a YAML/JSON file or a shipped "
                            f"profile: {', '.join(profile_names())}), on the simulated and the real tools; the "
                            "summary compares the two (robustness block)")
    group.add_argument("--fault-seed", type=int, default=None, metavar="N",
                       help="the policy's seed instead of its own (the same seed replays the same faults)")


def policy_from_args(args: argparse.Namespace) -> dict[str, Any] | None:
    """The run's fault policy as JSON (None without `--faults`).

    Raises:
        ValueError: no such file or profile, an invalid policy (every problem listed), or `--fault-seed` alone.
    """
    if args.faults is None:
        if args.fault_seed is not None:
            raise ValueError("--fault-seed needs --faults FILE|PROFILE")
        return None
    policy = load_policy(args.faults)
    if args.fault_seed is not None:
        policy = parse_policy({**policy.public(), "seed": args.fault_seed}, f"{args.faults} with --fault-seed")
    return policy.public()


def checked_policy(policy: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A recorded policy, validated (a run config's `faults` field).

    Raises:
        ValueError: the policy is invalid.
    """
    return None if policy is None else parse_policy(dict(policy), "of the run").public()


def with_fault_arm(items: Sequence[WorkItem], policy: Mapping[str, Any] | None) -> list[WorkItem]:
    """Each item, followed by its fault-arm twin when the run has a policy."""
    if policy is None:
        return list(items)
    out: list[WorkItem] = []
    for item in items:
        out += [item, WorkItem(item.key + FAULT_KEY_SUFFIX, item.group + FAULT_GROUP_SUFFIX, item.task)]
    return out


def is_fault_arm(key: str) -> bool:
    """Whether a work item's key is of the fault arm."""
    return key.endswith(FAULT_KEY_SUFFIX)


def clean_key(key: str) -> str:
    """The key of the clean twin (the key itself in the clean arm)."""
    return key[: -len(FAULT_KEY_SUFFIX)] if is_fault_arm(key) else key


def clean_group(group: str) -> str:
    """The group of the clean twin."""
    return group[: -len(FAULT_GROUP_SUFFIX)] if group.endswith(FAULT_GROUP_SUFFIX) else group


@dataclass(frozen=True)
class TaskFaults:
    """The policies of one task: for its Gecko sessions (`simulated`) and its real-tool bridge (`real`), each its
    own stream of draws (`<clean key>/<side>`); both None in the clean arm or without `--faults`."""

    simulated: FaultPolicy | None = None
    real: FaultPolicy | None = None

    @classmethod
    def of(cls, policy: Mapping[str, Any] | None, key: str) -> TaskFaults:
        """The policies of the work item `key` under the run's `policy`."""
        if policy is None or not is_fault_arm(key):
            return cls()
        parsed = parse_policy(dict(policy), "of the run")
        return cls(parsed.for_stream(f"{clean_key(key)}/simulated"), parsed.for_stream(f"{clean_key(key)}/real"))

    @property
    def active(self) -> bool:
        """Whether this task runs under faults."""
        return self.simulated is not None or self.real is not None

    def session_config(self) -> dict[str, Any]:
        """The `faults` member of a Gecko session's config ({} in the clean arm)."""
        return {"faults": self.simulated.public()} if self.simulated is not None else {}

    def row(self) -> dict[str, Any]:
        """What a fault-arm task's summary row names (`fault_policy`: the policy's name and seed)."""
        policy = self.simulated or self.real
        return {} if policy is None else {POLICY_KEY: {"name": policy.label, "seed": policy.seed}}
