"""Gecko: a tool-call simulation server for LLM agents."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("gecko-gats")
except PackageNotFoundError:  # a checkout run without installing it
    __version__ = "0.0.0+local"

if TYPE_CHECKING:
    from fastapi import FastAPI

    from utils.settings import Settings


def create_app(settings: Settings, registry: Any = None) -> FastAPI:
    """Build the Gecko FastAPI app (see `gecko.app.create_app`)."""
    from gecko.app import create_app as _create_app

    return _create_app(settings, registry)


__all__ = ["__version__", "create_app"]
