"""`gecko data …` dispatches to the exporter: listed in `gecko --help`, `gecko data export --help` is its help, an
unknown subcommand is a usage error."""

from __future__ import annotations

import pytest

from gecko_cli.main import main as gecko_main
from gecko_cli.main import usage


def test_gecko_data_export_is_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert "data" in usage()
    with pytest.raises(SystemExit) as exit_info:
        gecko_main(["data", "export", "--help"])
    assert exit_info.value.code == 0 and "--allow-test-tasks" in capsys.readouterr().out
    assert gecko_main(["data", "import"]) == 2
    assert "gecko data export RUN_DIR" in capsys.readouterr().err
