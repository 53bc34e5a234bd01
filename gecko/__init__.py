"""Gecko: a tool-call simulation server for LLM agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from utils.settings import Settings


def create_app(settings: Settings, registry: Any = None) -> FastAPI:
    """Build the Gecko FastAPI app (see `gecko.app.create_app`)."""
    from gecko.app import create_app as _create_app

    return _create_app(settings, registry)


__all__ = ["create_app"]
