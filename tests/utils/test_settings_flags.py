"""Server flags derived from `Settings`: every field has one, old spellings parse, priority holds, docs agree."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from gecko.cli import build_parser, main
from utils.paths import REPO_ROOT
from utils.roles import SERVER_ROLES
from utils.settings import ENV_PREFIX, Settings
from utils.settings_cli import DOC_BEGIN, DOC_END, flags_markdown, given_settings, setting_flags

CONFIG_PAGE = REPO_ROOT / "docs" / "reference" / "configuration.md"
"""The configuration reference: its flag tables are generated from the settings."""


def settings(argv: list[str]) -> Settings:
    return Settings(**given_settings(build_parser().parse_args(argv)))


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No GECKO_* variables and no .env: a working directory of our own."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_field_has_a_documented_flag_with_help() -> None:
    flags = setting_flags(server=None)
    assert [f.field for f in flags] == list(Settings.model_fields)
    page = CONFIG_PAGE.read_text(encoding="utf-8")
    for flag in flags:
        assert flag.help.endswith("."), flag.field  # a docstring under every field
        assert f"`{flag.names[0]}`" in page, flag.names[0]
    assert {f.field for f in flags if not f.server} == {"gecko_url"}  # the runners' setting, not the server's


def test_old_spellings_and_new_flags_parse(clean_env: Path) -> None:
    s = settings(["--schemas_dir", "a", "--schemas-dir", "b", "--no-cache", "--llm-timeout", "5", "--response_model",
                  "gpt-4o-mini", "--state-model", "none", "--skip-invalid", "--strict-validation", "--workers", "1",
                  "--store", "memory", "--log-level", "WARNING", "--llm-http-backend", "raw", "--history-limit", "7",
                  "--llm-max-concurrency", "3", "--llm-cache-path", "c.db"])
    assert s.schemas_dirs == [Path("a"), Path("b")] and s.llm_cache is False and s.llm_timeout_s == 5.0
    assert s.role_models() == {"validation": "rules", "response": "gpt-4o-mini", "state": "none", "judge": "rules"}
    assert s.skip_invalid and s.strict_validation and s.workers == 1 and s.store == "memory"
    assert (s.log_level, s.llm_http_backend, s.history_limit, s.llm_max_concurrency) == ("warning", "raw", 7, 3)
    assert s.llm_cache_path == Path("c.db")
    assert build_parser().parse_args(["--check"]).check


def test_a_secret_on_the_command_line_is_refused(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["--api-key", "k"])
    assert exit_info.value.code == 2
    assert "set GECKO_API_KEY" in capsys.readouterr().err


def test_the_key_comes_from_the_variable_or_a_file(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = clean_env / "key"
    key_file.write_text("from-file\nignored\n")
    assert settings(["--api-key-file", str(key_file)]).api_key.get_secret_value() == "from-file"
    monkeypatch.setenv("GECKO_API_KEY", "from-env")
    assert settings([]).api_key.get_secret_value() == "from-env"
    with pytest.raises(ValueError, match="not both"):
        settings(["--api-key-file", str(key_file)])
    monkeypatch.delenv("GECKO_API_KEY")
    key_file.write_text("")
    with pytest.raises(ValueError, match="is empty"):
        settings(["--api-key-file", str(key_file)])
    with pytest.raises(ValueError, match="cannot read"):
        settings(["--api-key-file", str(clean_env / "missing")])


def test_priority_flags_then_env_then_dotenv_then_defaults(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings([]).port == 8000 and settings([]).role_models()["judge"] == "rules"
    (clean_env / ".env").write_text("GECKO_PORT=1001\nGECKO_JUDGE_MODEL=from-dotenv\nGECKO_NO_SUCH=1\n")
    assert settings([]).port == 1001 and settings([]).role_models()["judge"] == "from-dotenv"
    monkeypatch.setenv("GECKO_PORT", "1002")
    monkeypatch.setenv("GECKO_JUDGE_MODEL", "from-env")
    assert settings([]).port == 1002 and settings([]).role_models()["judge"] == "from-env"
    flagged = settings(["--port", "1003", "--judge-model", "from-flag"])
    assert flagged.port == 1003 and flagged.role_models()["judge"] == "from-flag"


def test_bad_configuration_exits_2_with_the_flag_named(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check", "--response-model", "none"]) == 2
    assert "--response-model cannot be 'none'" in capsys.readouterr().err
    assert main(["--check", "--workers", "2", "--store", "memory"]) == 2
    with pytest.raises(SystemExit):
        main(["--port", "not-a-number"])


def test_help_lists_the_roles_from_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert all(f"--{role.name}-model" in out for role in SERVER_ROLES)
    assert "--schemas_dir" not in out  # snake_case aliases work but stay out of the help


def test_the_configuration_reference_flag_tables_are_generated_from_the_settings() -> None:
    page = CONFIG_PAGE.read_text(encoding="utf-8")
    block = page[page.index(DOC_BEGIN) + len(DOC_BEGIN) + 1:page.index(DOC_END)]
    assert block == flags_markdown(), "stale flag tables: run `python -m utils.settings_cli`"


def test_env_example_lists_every_variable() -> None:
    listed = set(re.findall(r"^# (GECKO_[A-Z_]+)=", (REPO_ROOT / ".env.example").read_text(), re.MULTILINE))
    assert listed == {flag.env for flag in setting_flags(server=None)}
