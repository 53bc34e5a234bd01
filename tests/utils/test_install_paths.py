"""What an installed Gecko finds without a checkout: bundled data, the data directory, results, and the command
line's own answers (`gecko --version`, `gecko serve --help`, a missing extra in one line)."""

from __future__ import annotations

from pathlib import Path

import pytest

import gecko
import utils
from gecko_cli import main as cli
from utils import paths


def test_the_example_toolkits_ship_inside_a_package() -> None:
    assert paths.EXAMPLE_TOOLKITS_DIR.is_relative_to(Path(utils.__file__).parent)
    assert {p.name for p in paths.EXAMPLE_TOOLKITS_DIR.iterdir()} >= {"orders.json", "petstore.yaml"}


def test_data_dir_is_the_variable_then_the_checkout_then_the_user_data_home(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GECKO_DATA_DIR", str(tmp_path / "given"))
    assert paths.default_data_dir() == tmp_path / "given"
    monkeypatch.delenv("GECKO_DATA_DIR")
    assert paths.default_data_dir() == paths.REPO_ROOT / "data"  # the tests run from a checkout
    monkeypatch.setattr(paths, "is_checkout", lambda: False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert paths.default_data_dir() == tmp_path / "share" / "gecko"


def test_results_go_under_the_working_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert paths.results_dir() == tmp_path / "results"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gecko {gecko.__version__}"


def test_serve_help_names_itself_and_hides_the_refused_key_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    usage = capsys.readouterr().out
    assert usage.startswith("usage: gecko serve ") and "[--api-key KEY]" not in usage and "GECKO_API_KEY" in usage


def _failing(name: str) -> cli.Command:
    def run(argv: list[str]) -> int:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return run


def test_a_missing_extra_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(cli.COMMANDS, "bfcl", ("BFCL", _failing("bfcl_eval.constants")))
    assert cli.main(["bfcl", "--help"]) == cli.EXIT_MISSING_EXTRA
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert 'pip install "gecko-gats[bfcl]" && pip install --no-deps bfcl-eval==' in err


def test_a_missing_module_no_extra_brings_still_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(cli.COMMANDS, "bfcl", ("BFCL", _failing("not_ours")))
    with pytest.raises(ModuleNotFoundError):
        cli.main(["bfcl"])


def test_the_makefile_installs_what_the_extras_message_names() -> None:
    from gecko_cli.extras import EXTRAS_OF_MODULES

    makefile = (paths.REPO_ROOT / "Makefile").read_text()
    for extra in EXTRAS_OF_MODULES.values():
        for pin in extra.no_deps:
            assert pin in makefile, f"{pin} (gecko_cli/extras.py) is not in the Makefile's PINNED_NO_DEPS"


def test_sessions_and_caches_live_in_the_working_directory_models_with_the_user(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from utils.local_model.cli import build_parser as local_model_parser
    from utils.settings import Settings

    monkeypatch.delenv("GECKO_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "user"))
    for project in ("a", "b"):  # two projects: two session stores, so each one's /ui shows its own sessions
        (tmp_path / project).mkdir()
        monkeypatch.chdir(tmp_path / project)
        settings = Settings(_env_file=None)
        assert settings.state_dir == tmp_path / project / ".gecko"
        assert settings.sqlite_path() == tmp_path / project / ".gecko" / "sessions.db"
    monkeypatch.setenv("GECKO_STATE_DIR", str(tmp_path / "shared"))
    assert Settings(_env_file=None).sqlite_path() == tmp_path / "shared" / "sessions.db"
    models = local_model_parser().parse_args(["serve"]).models_dir
    assert models == tmp_path / "user" / "gecko" / "models"  # downloaded models are shared by every project
