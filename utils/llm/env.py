"""`.env` loading and the list of environment variables the LLM layer reads."""

from __future__ import annotations

from pathlib import Path

from dotenv import find_dotenv, load_dotenv

ENV_VARS: dict[str, str] = {
    "OPENAI_API_KEY": "key for OpenAI aliases (gpt-4o, gpt-4.1*, gpt-5*, openai:<model>)",
    "OPENAI_BASE_URL": "redirect every OpenAI alias to another OpenAI-compatible server (no key needed then)",
    "DEEPSEEK_API_KEY": "key for deepseek-chat and deepseek-reasoner",
    "DEEPSEEK_BASE_URL": "override of https://api.deepseek.com/v1",
    "DASHSCOPE_API_KEY": "key for the Qwen aliases (DashScope, OpenAI-compatible mode)",
    "DASHSCOPE_BASE_URL": "override of https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    "OPENAI_COMPATIBLE_API_KEY": "key for openai-compatible:<model>@<url> (optional; local servers need none)",
    "OPENAI_COMPATIBLE_BASE_URL": "base URL for 'openai-compatible:<model>' written without '@<url>'",
}
"""Every variable `utils.llm` reads, with what it does (the source of `.env.example`)."""


def load_env(path: Path | str | None = None, *, override: bool = False) -> Path | None:
    """Load a `.env` file into `os.environ` (existing variables win unless `override`).

    Args:
        path: the file; default: the nearest `.env` from the working directory upwards.
        override: let the file replace variables already set.

    Returns:
        The file loaded, or None when there is none.
    """
    found = Path(path) if path is not None else (Path(p) if (p := find_dotenv(usecwd=True)) else None)
    if found is None or not found.is_file():
        return None
    load_dotenv(found, override=override)
    return found


def env_example() -> str:
    """`.env.example` lines for the LLM variables (commented out, with their description)."""
    return "\n".join(f"# {text}\n# {name}=" for name, text in ENV_VARS.items()) + "\n"
