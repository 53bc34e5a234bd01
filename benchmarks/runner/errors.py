"""Errors that stop a run before (or instead of) running tasks; each message says what to do.

```
RunError                 a run cannot start or go on; `gecko <benchmark>` prints the message and exits 1
├── SelectionError       the task selection names nothing that exists (unknown id, category, split …)
├── PreflightError       Gecko or a model is not set up for the run (nothing has been written yet)
└── ResumeError          `--resume` names no run directory, another benchmark's, or one made with other settings
```

Failures of single tasks are not errors here: they are task outcomes (`untested`, `errored`).
"""

from __future__ import annotations


class RunError(RuntimeError):
    """A run cannot start or go on; the message is meant for the user."""


class SelectionError(RunError):
    """The selection of tasks is wrong."""


class PreflightError(RunError):
    """Gecko (or a model) is not set up for this run; the message says how to fix it."""


class ResumeError(RunError):
    """The run directory given to `--resume` cannot be continued with these settings."""
