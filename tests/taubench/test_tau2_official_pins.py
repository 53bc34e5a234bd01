"""The official tau2 venv runs the project's pydantic: tau2 replays every tool call of a results file and raises when
an output differs from ours, and a validation error's text embeds pydantic's version
(`https://errors.pydantic.dev/2.12/v/literal_error`). With 2.14.3 pinned there while camel-ai held the project at
2.12.0, the parity test's probe conversation (a booking in cabin `premium`) failed on every run, not under load."""

from __future__ import annotations

import pydantic

from benchmarks.taubench.official import TAU2_VENV


def test_the_official_venv_pins_the_projects_pydantic() -> None:
    pins = [pin for pin in TAU2_VENV.pins if pin.startswith("pydantic==")]
    assert pins == [f"pydantic=={pydantic.VERSION}"]
