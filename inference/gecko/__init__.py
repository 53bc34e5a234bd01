"""Talking to Gecko over HTTP: the client, its errors and response models, and the tool backend."""

from inference.gecko.backend import GeckoToolBackend, fetch_catalog
from inference.gecko.client import SESSION_HEADER, GeckoClient, ToolResponse
from inference.gecko.errors import (
    GeckoError,
    GeckoJudgeError,
    GeckoNotFoundError,
    GeckoRequestError,
    GeckoUnavailableError,
)
from inference.gecko.models import (
    ChecklistItem,
    ChecklistReply,
    HealthInfo,
    ItemVerdict,
    JudgeReply,
    RoleInfo,
    SessionInfo,
    StateReply,
    ToolSearchHit,
    ToolSearchReply,
)
from inference.gecko.sandbox import GeckoSandbox

__all__ = [
    "SESSION_HEADER", "ChecklistItem", "ChecklistReply", "GeckoClient", "GeckoError", "GeckoJudgeError",
    "GeckoNotFoundError", "GeckoRequestError", "GeckoSandbox", "GeckoToolBackend", "GeckoUnavailableError", "HealthInfo",
    "ItemVerdict", "JudgeReply", "RoleInfo", "SessionInfo", "StateReply", "ToolResponse", "ToolSearchHit", "ToolSearchReply",
    "fetch_catalog",
]
