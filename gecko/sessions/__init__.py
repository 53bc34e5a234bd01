"""Sessions: records, the store interface and its backends, and state operations."""

from gecko.sessions.model import (
           Commit,
           SessionBusy,
           SessionNotFound,
           SessionRecord,
           VersionConflict,
           VersionGone,
)
from gecko.sessions.store import SessionStore, open_store

__all__ = ["Commit", "SessionBusy", "SessionNotFound", "SessionRecord", "SessionStore", "VersionConflict", "VersionGone",
           "open_store"]
