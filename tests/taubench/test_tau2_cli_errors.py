"""`gecko tau2` as a new user meets it: every ordinary mistake stops before any task with one line and a non-zero
exit (no key, a misspelled alias, a model server that is down, no Gecko, a Gecko with an API key, bad ids, a resume
into another domain), and Ctrl-C says how to go on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.runner.summary import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from benchmarks.taubench.mock_toolkits import MOCK_DIR
from gecko_cli.main import main as gecko_main
from utils.paths import REPO_ROOT
from utils.procs import free_port, gecko_server

OFFLINE = ("--gats-mode", "none", "--no-progress", "--no-cache")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GECKO_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("benchmarks.runner.command.load_env", lambda: None)  # a developer's .env must not help


def _tau2(tmp_path: Path, *argv: str) -> int:
    return gecko_main(["tau2", "--output-dir", str(tmp_path / "out"), *argv])


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("agent", "message"), [
    ("gpt-4.1", "needs an API key: set OPENAI_API_KEY"),  # the README's command, no key
    ("gpt-4.1-mni", "unknown model 'gpt-4.1-mni'"),
])
def test_no_key_or_a_misspelled_alias_stops_before_any_task(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            agent: str, message: str) -> None:
    assert _tau2(tmp_path, "--domain", "airline", "--agent-llm", agent, "--user-llm", agent, *OFFLINE) == EXIT_ERROR
    assert message in _one_line(capsys)
    assert not (tmp_path / "out").exists()


def test_a_model_server_that_is_down_fails_the_preflight_in_seconds(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    model = f"openai-compatible:m@http://127.0.0.1:{free_port()}/v1"
    started = time.perf_counter()
    assert _tau2(tmp_path, "--domain", "airline", "--agent-llm", model, *OFFLINE) == EXIT_ERROR
    assert "is unreachable" in _one_line(capsys) and time.perf_counter() - started < 20
    assert not (tmp_path / "out").exists()


def test_no_gecko_bad_ids_and_bad_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    assert _tau2(tmp_path, "--domain", "airline", "--gecko-url", nowhere, "--no-progress") == EXIT_ERROR
    assert "Gecko is not reachable" in _one_line(capsys)
    assert _tau2(tmp_path, "--domain", "airline", "--ids", "0,999", *OFFLINE) == EXIT_ERROR
    assert "tasks not in airline v1 base: 999" in _one_line(capsys)
    for flags, message in ((["--num-tasks", "0"], "num_tasks"), (["--max-retries", "-1"], "gats_retries"),
                           (["--num-trials", "0"], "num_trials"), (["--workers", "0"], "workers"),
                           ([], "the following arguments are required: --domain")):
        domain = ["--domain", "airline"] if flags else []
        assert _tau2(tmp_path, *domain, *flags, *OFFLINE) == EXIT_USAGE, flags
        assert message in _one_line(capsys)
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def keyed_gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("keyed-gecko")
    with gecko_server([MOCK_DIR], workers=1, state_dir=state, api_key="s3cret") as url:
        yield url


@pytest.mark.integration
def test_a_gecko_with_an_api_key(keyed_gecko: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ("--domain", "airline", "--ids", "0", "--gecko-url", keyed_gecko, "--no-progress", "--no-cache")
    assert _tau2(tmp_path, *common) == EXIT_ERROR
    assert "requires an API key: pass --gecko-api-key-file" in _one_line(capsys)
    wrong = tmp_path / "wrong-key"
    wrong.write_text("wrong\n")
    assert _tau2(tmp_path, *common, "--gecko-api-key-file", str(wrong)) == EXIT_ERROR
    assert "refused our API key" in _one_line(capsys)
    key = tmp_path / "key"
    key.write_text("s3cret\n")
    assert _tau2(tmp_path, *common, "--gecko-api-key-file", str(key)) == EXIT_OK
    (run_dir,) = (tmp_path / "out").iterdir()
    assert "s3cret" not in (run_dir / "config.json").read_text()


def test_resume_restores_trials_and_refuses_another_domain(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert _tau2(tmp_path, "--domain", "airline", "--ids", "0,1", "--num-trials", "3", *OFFLINE) == EXIT_OK
    (run_dir,) = (tmp_path / "out").iterdir()
    capsys.readouterr()
    assert _tau2(tmp_path, "--resume", str(run_dir), "--no-progress") == EXIT_OK
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["total"]["selected"] == 6 and summary["total"]["skipped"] == 6  # --num-trials 3 kept
    config = json.loads((run_dir / "config.json").read_text())
    assert config["resumes"][0]["config"]["num_trials"] == 3
    assert _tau2(tmp_path, "--resume", str(run_dir), "--domain", "retail") == EXIT_ERROR
    assert "domain was 'airline', now 'retail'" in _one_line(capsys)
    assert _tau2(tmp_path, "--resume", str(tmp_path / "missing")) == EXIT_ERROR
    assert "does not exist" in _one_line(capsys)
    assert not (tmp_path / "missing").exists()


@pytest.mark.integration
def test_ctrl_c_keeps_finished_conversations_and_says_how_to_resume(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, str(REPO_ROOT / "run_taubench.py"), "--domain", "retail", "--output-dir", str(out),
           *OFFLINE]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        ledgers = list(out.glob("*/tasks.jsonl"))
        if ledgers and ledgers[0].read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    (run_dir,) = out.iterdir()
    assert proc.returncode == EXIT_INTERRUPTED and f"--resume {run_dir}" in err and "Traceback" not in err
    assert len(json.loads((run_dir / "results.json").read_text())["simulations"]) >= 3
