"""Conversation messages in tau2's shape (`role`, `content`, `tool_calls`, ...), so trajectories load
in the official tools unchanged."""

from __future__ import annotations

import datetime
from typing import Annotated, Literal, Optional, Union

from pydantic import BaseModel, Field

Requestor = Literal["user", "assistant"]


def now_iso() -> str:
    """Local wall-clock time in ISO format, as tau2 stamps messages."""
    return datetime.datetime.now().isoformat()


class MessageToolCall(BaseModel):
    """A tool call made by the agent (or, in domains with user tools, by the user)."""

    id: str = Field("", description="Call id, unique within the conversation; pairs it with its result")
    name: str = Field(description="Tool name")
    arguments: dict = Field(description="Keyword arguments, JSON-decoded")
    requestor: Requestor = Field("assistant", description="Who made the call")


class _Stamped(BaseModel):
    turn_idx: Optional[int] = Field(None, description="Position in the conversation")
    timestamp: Optional[str] = Field(default_factory=now_iso, description="When the message was created")


class SystemMessage(_Stamped):
    """A system prompt."""

    role: Literal["system"] = "system"
    content: Optional[str] = Field(None, description="Prompt text")


class _ParticipantMessage(_Stamped):
    content: Optional[str] = Field(None, description="Text sent to the other participant")
    tool_calls: Optional[list[MessageToolCall]] = Field(None, description="Tool calls; a message has text or calls")
    cost: Optional[float] = Field(None, description="LLM cost of producing the message, in dollars")
    usage: Optional[dict] = Field(None, description="LLM token usage of producing the message")
    raw_data: Optional[dict] = Field(None, description="Raw provider response, if kept")

    def has_text(self) -> bool:
        """Whether the message carries non-blank text."""
        return self.content is not None and self.content.strip() != ""

    def is_tool_call(self) -> bool:
        """Whether the message carries tool calls (an empty list counts, as in tau2)."""
        return self.tool_calls is not None


class AssistantMessage(_ParticipantMessage):
    """A message from the agent."""

    role: Literal["assistant"] = "assistant"


class UserMessage(_ParticipantMessage):
    """A message from the (simulated) customer."""

    role: Literal["user"] = "user"


class ToolMessage(_Stamped):
    """The result of one tool call."""

    id: str = Field(description="Id of the tool call this answers")
    role: Literal["tool"] = "tool"
    content: Optional[str] = Field(None, description="Serialised result, or 'Error: <message>'")
    requestor: Requestor = Field("assistant", description="Who made the call")
    error: bool = Field(False, description="Whether the call failed")


Message = Annotated[
    Union[SystemMessage, AssistantMessage, UserMessage, ToolMessage], Field(discriminator="role")
]
"""Any conversation message, told apart by `role`."""
