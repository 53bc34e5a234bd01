"""tests/infra.py: missing required infrastructure skips on a developer's machine and fails under CI=true."""

from __future__ import annotations

import pytest

from tests.infra import CI_VARIABLE, require, require_installed, require_module


@pytest.mark.parametrize("value", ["true", "1", "TRUE", "yes"])
def test_in_ci_a_missing_requirement_fails_with_the_reason(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(CI_VARIABLE, value)
    with pytest.raises(pytest.fail.Exception, match=r"required infrastructure is missing .*redis-server is not installed"):
        require(None, "redis-server is not installed")
    with pytest.raises(pytest.fail.Exception, match=r"no_such_module_here"):
        require_module("no_such_module_here", "needs an extra")
    with pytest.raises(pytest.fail.Exception, match=r"needs an extra"):
        require_installed("no_such_module_here", "needs an extra")


@pytest.mark.parametrize("value", [None, "", "false", "0"])
def test_elsewhere_it_skips_with_the_reason(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(CI_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(CI_VARIABLE, value)
    with pytest.raises(pytest.skip.Exception, match="redis-server is not installed"):
        require("", "redis-server is not installed")


def test_what_is_there_passes_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CI_VARIABLE, "true")
    require("/usr/bin/redis-server", "unused")
    assert require_module("json", "unused").dumps([]) == "[]"
    require_installed("json", "unused")
