"""The language of a BFCL category's function docs and answers, as `bfcl evaluate` picks its decoder and type rules:
Java for simple_java, JavaScript for simple_javascript, Python for every other category."""

from __future__ import annotations

from typing import Literal

CallLanguage = Literal["python", "java", "javascript"]
"""The language of a category's function docs and of the call text `bfcl evaluate` decodes for it."""
SOURCE_LANGUAGE_CATEGORIES: dict[str, CallLanguage] = {"simple_java": "java", "simple_javascript": "javascript"}
"""The categories whose answers are Java/JavaScript call text (`source_calls`)."""


def call_language(category: str) -> CallLanguage:
    """The language of a category's docs and answers (`python` for any category not listed above)."""
    return SOURCE_LANGUAGE_CATEGORIES.get(category, "python")
