"""State versions as JSON-Patch deltas with full checkpoints sized to the changes.

A commit that changes the state stores either the whole new state (a checkpoint) or the RFC 6902
patch from the previous version (a delta). Version N is rebuilt from the last checkpoint at or
before N plus the deltas after it. A version is a checkpoint when the deltas since the last one
add up to at least that checkpoint's size (and at least `checkpoint_every` versions passed), so a
checkpoint costs, spread over the versions before it, no more than the changes themselves: bytes
stored and written per version stay constant however large the state grows, and rebuilding any
version reads at most about twice the state's size. The retention window (`max_versions`) is the
same on every store: the last `max_versions` versions are readable; older ones are dropped,
physically a little later (back to the checkpoint the oldest kept version needs).

`apply_shared` applies a delta to a state that others may still hold (the stores' decoded-state
cache), copying only the containers on the changed paths, and tells the observers registered with
`observe_copies` which container it copied into which and what changed in it, so a cache derived
from a container (the world model's id indexes) follows the state in the size of the change.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import jsonpatch
import jsonpointer

TRIM_EVERY = 16
"""Stores drop history entries and versions that fell out of the window every TRIM_EVERY commits."""


@dataclass(frozen=True)
class Retention:
    """How long and how much of a session the store keeps (one behaviour on every store)."""

    ttl: float
    """Seconds of inactivity after which a session expires; the sweep then deletes it with its versions and history."""
    history_limit: int = 1000
    """Calls kept in a session's history, the most recent ones; 0 keeps every call (until the session expires)."""
    max_versions: int = 1000
    """State versions readable with `?version=N`, the most recent ones; 0 keeps every version."""
    checkpoint_every: int = 32
    """Fewest versions between two full states (more when the state is large: see `is_checkpoint`)."""

    def oldest_version(self, current: int) -> int:
        """The oldest version still readable when the session is at `current`."""
        return max(0, current - self.max_versions + 1) if self.max_versions else 0

    def first_call(self, calls: int) -> int:
        """Sequence number (1-based) of the oldest history entry kept after `calls` calls."""
        return max(1, calls - self.history_limit + 1) if self.history_limit else 1

    def is_checkpoint(self, version: int, patch_bytes: int | None, since: Checkpointed) -> bool:
        """Whether `version` is stored whole.

        Args:
            version: the new version.
            patch_bytes: size of its patch as stored (None: no patch is known, so it is stored whole).
            since: where the session's last checkpoint is and what was stored after it.
        """
        if patch_bytes is None:
            return True
        return (version - since.base_version >= self.checkpoint_every
                and since.delta_bytes + patch_bytes >= since.base_bytes)


class Checkpointed(Protocol):
    """What a session stored since its last checkpoint (`SessionRecord` keeps it on every store)."""

    base_version: int
    """The last version stored whole."""
    base_bytes: int
    """Its size as stored."""
    delta_bytes: int
    """Bytes of the deltas stored after it."""


def account_version(since: Checkpointed, version: int, stored_bytes: int, checkpoint: bool) -> None:
    """Update a session's checkpoint bookkeeping for a new version stored in `stored_bytes`."""
    if checkpoint:
        since.base_version, since.base_bytes, since.delta_bytes = version, stored_bytes, 0
    else:
        since.delta_bytes += stored_bytes


def rebuild(entries: list[tuple[int, bool, Any]], version: int,
            base: tuple[int, dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The state at `version` from `(version, is_checkpoint, state or patch)` rows in version order.

    The rows must start at a checkpoint, or right after `base` (a known `(version, state)`, which is
    not changed), and run without a gap up to `version`; otherwise None.
    """
    if base is not None and base[0] == version and not entries:
        return base[1]
    if not entries or entries[-1][0] != version:
        return None
    if any(number != entries[0][0] + i for i, (number, _, _) in enumerate(entries)):
        return None
    state: Any = None
    first = 0
    if not entries[0][1]:
        if base is None or base[0] != entries[0][0] - 1:
            return None
        # the deltas up to the next checkpoint as one patch: `base` is shared, so the containers they change are
        # copied once, and nothing derived from a copy (an id index) is patched behind its back afterwards
        first = next((i for i, (_, checkpoint, _) in enumerate(entries) if checkpoint), len(entries))
        state = apply_shared(base[1], [op for _, _, body in entries[:first] for op in body])
    for _, checkpoint, body in entries[first:]:
        if checkpoint:
            state = body
        else:  # rows just read from the store belong to nobody else: patch them in place
            state = jsonpatch.apply_patch(state, body, in_place=True)
    return state


def _index(part: str) -> int:
    index = int(part)
    if index < 0:
        raise IndexError(f"{part} is not a list index")
    return index


def _parts(path: str) -> list[str]:
    return jsonpointer.JsonPointer(path).parts


@dataclass
class Copied:
    """A container `apply_shared` copied to change it: `new` is `old` with the members at `keys` changed."""

    old: dict[str, Any] | list[Any]
    new: dict[str, Any] | list[Any]
    keys: set[str | int] = field(default_factory=set)
    """Object keys, or list indexes, whose member was added, replaced or removed, or changed inside."""
    moved: bool = False
    """Members changed places: a list item inserted before the end or removed before the last one (the indexes
    after it name other items), or an object key removed and added again (it is now the last key)."""


CopyObserver = Callable[[Copied], None]
_OBSERVERS: list[CopyObserver] = []


def observe_copies(observer: CopyObserver) -> None:
    """Have `observer` called with each container `apply_shared` copies, once the whole patch applied (nothing
    when it does not apply). A cache derived from `old` may carry itself over to `new` from there."""
    if observer not in _OBSERVERS:
        _OBSERVERS.append(observer)


def apply_shared(state: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """`state` after `patch`, without changing `state` or anything it contains.

    `add`, `remove` and `replace` copy only the containers on their paths (each at most once per
    patch), so applying a small delta to a large state costs the size of the delta and of those
    containers; other operations fall back to a deep copy (and nothing is reported as copied).

    Raises:
        jsonpatch.JsonPatchException, jsonpointer.JsonPointerException: the patch does not apply.
    """
    if any(op.get("op") not in ("add", "remove", "replace") for op in patch):
        return jsonpatch.apply_patch(copy.deepcopy(state), patch, in_place=True)
    copies: dict[int, Copied] = {}

    def own(container: Any) -> Copied:
        known = copies.get(id(container))
        if known is not None:
            return known
        if not isinstance(container, (dict, list)):
            raise TypeError(f"{type(container).__name__} is not a container")
        copied = Copied(container, dict(container) if isinstance(container, dict) else list(container))
        copies[id(copied.new)] = copied  # the entry keeps the copy alive, so its id is not reused
        return copied

    root: Any = state
    for op in patch:
        parts = _parts(op["path"])
        if not parts:
            if op["op"] == "remove":
                raise jsonpatch.JsonPatchConflict("cannot remove the whole document")
            root = op["value"]
            continue
        try:
            parent = own(root)
            root = parent.new
            for part in parts[:-1]:
                key: Any = part if isinstance(parent.new, dict) else _index(part)
                child = own(parent.new[key])
                parent.new[key] = child.new
                parent.keys.add(key)
                parent = child
            _apply_leaf(parent, parts[-1], op)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise jsonpatch.JsonPatchConflict(f"{op['path']}: {exc}") from exc
    for copied in copies.values():
        for observer in _OBSERVERS:
            observer(copied)
    return root


def _apply_leaf(copied: Copied, part: str, op: dict[str, Any]) -> None:
    kind, parent = op["op"], copied.new
    if isinstance(parent, dict):
        if kind != "add" and part not in parent:
            raise jsonpatch.JsonPatchConflict(f"{op['path']} is not in the document")
        if kind == "remove":
            del parent[part]
        else:
            copied.moved |= part not in parent and part in copied.keys  # removed before: now the last key
            parent[part] = op["value"]
        copied.keys.add(part)
        return
    if kind == "add":
        index = len(parent) if part == "-" else int(part)
        if not 0 <= index <= len(parent):
            raise jsonpatch.JsonPatchConflict(f"{op['path']} is out of range")
        copied.moved |= index < len(parent)
        parent.insert(index, op["value"])
        copied.keys.add(index)
        return
    index = int(part)
    if not 0 <= index < len(parent):
        raise jsonpatch.JsonPatchConflict(f"{op['path']} is out of range")
    if kind == "remove":
        copied.moved |= index < len(parent) - 1
        del parent[index]
    else:
        parent[index] = op["value"]
    copied.keys.add(index)
