"""`perf/gats_lift.py` prints its table as a table: the markdown lines as text after the JSON figures."""

from __future__ import annotations

import importlib.util
import json

from utils.paths import REPO_ROOT


def test_the_table_is_printed_as_text_not_as_an_escaped_json_string() -> None:
    spec = importlib.util.spec_from_file_location("gats_lift", REPO_ROOT / "perf" / "gats_lift.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = {"retries": 1, "accuracy": {"simple_python": 0.5, "multiple": None}, "tokens_per_task": 10,
           "seconds_per_task": 0.2, "schema_errors": {"calls_rejected": 3, "tasks_fixed_by_retries": 2}}
    text = module.render({"benchmark": "gats_lift", "rows": [row]})
    figures, table = text.split("\n\n", 1)
    assert json.loads(figures)["rows"] == [row] and "\\n" not in text
    assert table.splitlines()[0] == ("| retries | simple_python | multiple | tokens/task | s/task | rejected calls | "
                                     "fixed by retries |")
    assert table.splitlines()[2] == "| 1 | 50.0% | – | 10 | 0.2 | 3 | 2 |"
