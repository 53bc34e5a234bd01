"""BFCL benchmark plugin: tasks from the installed `bfcl-eval` data, safe call parsing, result export in
the official format, and scoring through the official checkers (see README.md).

Importing this package does not load the checkers; `benchmarks.bfcl.checker` does, on first use.
"""

from benchmarks.bfcl.categories import (
    ALL_CATEGORIES,
    LIVE_CATEGORIES,
    MULTI_TURN_CATEGORIES,
    NON_LIVE_CATEGORIES,
    SINGLE_TURN_CATEGORIES,
    expand_categories,
)
from benchmarks.bfcl.export import ResultRecord, read_results, result_path, write_results
from benchmarks.bfcl.loader import (
    BfclTask,
    Message,
    MultiTurnTask,
    SingleTurnTask,
    load_category,
    load_tasks,
    select_tasks,
)
from benchmarks.bfcl.parse import (
    BadCallError,
    CallParseError,
    FunctionCall,
    NotACallError,
    format_call,
    format_calls,
    parse_calls,
)

__all__ = [
    "ALL_CATEGORIES",
    "LIVE_CATEGORIES",
    "MULTI_TURN_CATEGORIES",
    "NON_LIVE_CATEGORIES",
    "SINGLE_TURN_CATEGORIES",
    "BadCallError",
    "BfclTask",
    "CallParseError",
    "FunctionCall",
    "Message",
    "MultiTurnTask",
    "NotACallError",
    "ResultRecord",
    "SingleTurnTask",
    "expand_categories",
    "format_call",
    "format_calls",
    "load_category",
    "load_tasks",
    "parse_calls",
    "read_results",
    "result_path",
    "write_results",
    "select_tasks",
]
