"""`make demo`'s "what GATS fixed" table: the error is shown whole (a misspelled tool name is the point of the row)
and the columns line up however long a cell is."""

from __future__ import annotations

import importlib.util

from utils.paths import REPO_ROOT


def test_the_fixed_table_never_cuts_the_misspelled_name() -> None:
    spec = importlib.util.spec_from_file_location("demo", REPO_ROOT / "scripts" / "demo.py")
    assert spec is not None and spec.loader is not None
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    name = "calculate_the_area_of_a_triangle_given_base_and_height"
    description = f"tool name {name} -> {name}t"
    traces = [{"id": "simple_python_3", "valid": True, "attempts": [{}, {}],
               "agent_info": {"corruptions": [{"kind": "misspelled_tool", "fixed": True, "description": description}]}},
              {"id": "simple_python_12", "valid": False, "attempts": [{}],
               "agent_info": {"corruptions": [{"kind": "semantic", "fixed": False, "description": "x: 1 -> 2"}]}}]
    lines = demo.fixed_table(traces)
    assert f"{name}t" in lines[1] and "fixed on retry" in lines[1]
    assert lines[1].index("fixed on retry") == lines[2].index("not caught") == lines[0].index("GATS")
    assert lines[-1] == "\nby kind: misspelled_tool 1/1 fixed, semantic 0/1 fixed"
