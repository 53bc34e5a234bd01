"""What a session is at a glance, and how sessions are listed: status, tags, queries, pages.

Every store keeps, beside the record, two things that make listing cheap at 100k sessions:

- a **status**, updated at each commit from the history entry it writes (`next_status`):

  | status | meaning |
  |---|---|
  | `new` | nothing happened yet |
  | `ok` | calls (or state changes), none rejected |
  | `rejected` | at least one call was rejected (422 or another error status) |
  | `success` / `failed` | the last verdict of the judge (`POST /sessions/{id}/judge`) |
  | `unjudged` | the judge was asked and produced no verdict |

- **tags**, strings indexed by creation time: `label:KEY=VALUE` per label, `toolkit:NAME` per toolkit of the
  session's `toolkits` config or, for a session without one, per toolkit it has called, and `parent:ID` on a
  fork. A listing walks one index newest first (the tag asked for, the status, or every session) and checks
  the other filters on each candidate; pages are cut with a keyset cursor `(created, id)`, never an offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

STATUSES = ("new", "ok", "rejected", "success", "failed", "unjudged")
VERDICT_STATUSES = frozenset({"success", "failed", "unjudged"})
JUDGE_ENTRY = "#judge"
"""`tool` of the history entry the judge endpoint writes (its verdict, or why there is none)."""
CHECKLIST_ENTRY = "#checklist"
"""`tool` of the history entry that accounts for a checklist's LLM calls (it does not change the status)."""
MAX_SCAN = 20000
"""Candidates a listing examines per page at most; past it the page ends early with a cursor to go on."""


def next_status(current: str, entry: dict[str, Any] | None) -> str:
    """The session's status after a commit that writes the history `entry` (None: unchanged)."""
    if entry is None:
        return current
    if entry.get("tool") == JUDGE_ENTRY:
        verdict = entry.get("verdict")
        if entry.get("status") != 200 or not isinstance(verdict, dict):
            return "unjudged"
        return "success" if verdict.get("success") else "failed"
    if current in VERDICT_STATUSES or entry.get("tool") == CHECKLIST_ENTRY:
        return current
    status = entry.get("status")
    if isinstance(status, int) and status >= 400:
        return "rejected"
    return "ok" if current == "new" else current


def label_tag(key: str, value: str) -> str:
    return f"label:{key}={value}"


def toolkit_tag(name: str) -> str:
    return f"toolkit:{name}"


def parent_tag(session_id: str) -> str:
    return f"parent:{session_id}"


def initial_tags(config: dict[str, Any]) -> list[str]:
    """Tags of a new session: its labels, its configured toolkits, its parent."""
    tags = [label_tag(str(k), str(v)) for k, v in sorted((config.get("labels") or {}).items())]
    tags += [toolkit_tag(str(name)) for name in config.get("toolkits") or []]
    if config.get("forked_from"):
        tags.append(parent_tag(str(config["forked_from"])))
    return tags


def added_tags(config: dict[str, Any], tags: list[str], entry: dict[str, Any] | None) -> list[str]:
    """Tags a commit adds: the toolkit of a call, for a session without a `toolkits` config, the first time."""
    if entry is None or config.get("toolkits"):
        return []
    tool = str(entry.get("tool") or "")
    if not tool or tool.startswith("#") or "/" not in tool:
        return []
    tag = toolkit_tag(tool.split("/", 1)[0])
    return [] if tag in tags else [tag]


@dataclass(frozen=True)
class SessionQuery:
    """Filters and a page of a listing (all filters must hold)."""

    tags: tuple[str, ...] = ()
    status: str | None = None
    limit: int = 50
    cursor: tuple[float, str] | None = None
    """Only sessions strictly older than this `(created, id)` (the previous page's `next_cursor`)."""

    def matches(self, status: str, tags: list[str] | tuple[str, ...]) -> bool:
        """Whether a session with this status and these tags passes the filters."""
        return (self.status is None or status == self.status) and all(tag in tags for tag in self.tags)

    def before_cursor(self, created: float, session_id: str) -> bool:
        """Whether `(created, id)` comes after the cursor in newest-first order."""
        return self.cursor is None or (created, session_id) < self.cursor


@dataclass
class SessionSummary:
    """A session as listings show it (no state, no history)."""

    id: str
    created: float
    updated: float
    status: str
    calls: int
    version: int
    config: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        """JSON form: labels, toolkits, parent, the version it was forked at and its note come from the config."""
        config = self.config
        toolkits = [t.removeprefix("toolkit:") for t in self.tags if t.startswith("toolkit:")]
        return {"session_id": self.id, "created": self.created, "updated": self.updated, "status": self.status,
                "calls": self.calls, "version": self.version, "labels": dict(config.get("labels") or {}),
                "toolkits": toolkits, "parent": config.get("forked_from"),
                "fork_version": config.get("fork_version"), "note": config.get("note"),
                "mode": config.get("mode") or "simulate"}


@dataclass
class SessionPage:
    """One page of a listing, newest first."""

    sessions: list[SessionSummary]
    next_cursor: tuple[float, str] | None
    """Where the next page starts (None: this was the last)."""
    total: int | None = None
    """Sessions matching the filters, when the store can count them cheaply (the first page only)."""


CURSOR_PATTERN = r"^([0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?~.+)?$"
"""What `encode_cursor` makes (`created~id`, `created` a finite non-negative float's repr), or nothing."""
_CURSOR = re.compile(CURSOR_PATTERN)


def encode_cursor(cursor: tuple[float, str] | None) -> str | None:
    """The opaque form of a cursor (`created~id`)."""
    return None if cursor is None else f"{cursor[0]!r}~{cursor[1]}"


def decode_cursor(text: str | None) -> tuple[float, str] | None:
    """A cursor from its opaque form.

    Raises:
        ValueError: Not a cursor this server made.
    """
    if not text:
        return None
    if not _CURSOR.match(text):
        raise ValueError(f"not a listing cursor: {text!r}")
    created, _, session_id = text.partition("~")
    return float(created), session_id


def page_of(candidates: list[SessionSummary], query: SessionQuery,
            stopped_at: tuple[float, str] | None = None) -> SessionPage:
    """Cut `candidates` (matching, newest first, up to `limit + 1`) into a page.

    Args:
        candidates: The matching sessions found, newest first.
        query: The listing asked for.
        stopped_at: The last `(created, id)` examined when the scan stopped at `MAX_SCAN` before the end.
    """
    shown = candidates[: query.limit]
    if len(candidates) > query.limit:
        return SessionPage(shown, (shown[-1].created, shown[-1].id))
    return SessionPage(shown, stopped_at)
