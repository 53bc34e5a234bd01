"""Start-up (issue 33 item 8): validated documents are remembered in the toolkit cache dir, keyed by the file's hash
and the Gecko version, whatever the state dir; a warm start skips validation and, for a clean document, the repair
pass; a start prints its progress."""

from __future__ import annotations

import pytest

import gecko.toolkits.loader as loader
import gecko.toolkits.validation_cache as validation_cache
from gecko.cli import main as serve_main
from gecko.toolkits import load_toolkits
from tests.conftest import TOOLKITS_DIR


def _boom(*_args, **_kwargs):
    raise AssertionError("done again on a warm start")


def test_a_warm_start_skips_validation_and_repair_whatever_the_state_dir(tmp_path, monkeypatch, capsys):
    args = ["--check", "--schemas-dir", str(TOOLKITS_DIR), "--toolkit-cache-dir", str(tmp_path / "cache"),
            "--log-level", "warning"]
    assert serve_main([*args, "--state-dir", str(tmp_path / "one")]) == 0
    err = capsys.readouterr().err
    assert "gecko: loading 2 document(s) from 1 directory" in err and "gecko: validating 2 document(s)" in err
    monkeypatch.setattr(loader, "spec_errors", _boom)
    monkeypatch.setattr(loader, "repair_document", _boom)
    assert serve_main([*args, "--state-dir", str(tmp_path / "two")]) == 0
    assert "validating" not in capsys.readouterr().err


def test_the_cache_is_keyed_by_the_gecko_version(tmp_path, monkeypatch):
    load_toolkits([TOOLKITS_DIR], cache_dir=tmp_path)
    assert "gecko-" in validation_cache.cache_tag()
    monkeypatch.setattr(validation_cache, "cache_tag", lambda: "gecko-99.0-other")
    validated = []
    real = loader.spec_errors
    monkeypatch.setattr(loader, "spec_errors", lambda doc, strict=True: validated.append(1) or real(doc, strict))
    load_toolkits([TOOLKITS_DIR], cache_dir=tmp_path)
    assert len(validated) == 2


def test_a_warm_server_start_checks_without_compiling(tmp_path, monkeypatch, capsys):
    import gecko.cli as cli
    from utils.settings import Settings

    settings = Settings(schemas_dirs=[TOOLKITS_DIR], toolkit_cache_dir=tmp_path / "cache", state_dir=tmp_path)
    cold = cli._load(settings)
    monkeypatch.setattr(cli, "load_toolkits", _boom)
    assert cli._load(settings) == cold  # the same counts, from the cache
    assert "2 toolkit(s) known from the toolkit cache" in capsys.readouterr().err
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "new.json").write_text((TOOLKITS_DIR / "notes.json").read_text().replace('"Notes', '"New'))
    with pytest.raises(AssertionError, match="warm start"):  # an unknown document: a full check
        cli._load(Settings(schemas_dirs=[TOOLKITS_DIR, tmp_path / "more"], toolkit_cache_dir=tmp_path / "cache",
                           state_dir=tmp_path))
