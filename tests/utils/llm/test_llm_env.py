"""`.env` loading and the variable list."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from utils.llm import ENV_VARS, env_example, load_env
from utils.llm.aliases import PROVIDERS


def test_every_provider_variable_is_listed() -> None:
    for provider in PROVIDERS.values():
        assert provider.key_env in ENV_VARS and provider.base_url_env in ENV_VARS
    assert "# OPENAI_API_KEY=" in env_example()


def test_load_env_sets_missing_variables_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("GECKO_TEST_A=from-file\nGECKO_TEST_B=from-file\n")
    monkeypatch.setenv("GECKO_TEST_B", "from-env")
    monkeypatch.delenv("GECKO_TEST_A", raising=False)
    assert load_env(env_file) == env_file
    assert os.environ["GECKO_TEST_A"] == "from-file" and os.environ["GECKO_TEST_B"] == "from-env"
    monkeypatch.delenv("GECKO_TEST_A")


def test_load_env_without_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_env(tmp_path / "missing.env") is None
