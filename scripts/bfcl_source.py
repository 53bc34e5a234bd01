"""Read the pinned, installed `bfcl-eval` package's data (JSON Lines files) through importlib.resources.

Only data files and the two constant modules are touched: no model handler, no `eval_config`
(which would create directories in site-packages).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from typing import Any

PACKAGE = "bfcl_eval"
SINGLE_TURN_CATEGORIES = (
    "simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance",
)
MULTI_TURN_CLASSES = (
    "GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot", "TravelAPI",
    "VehicleControlAPI",
)
MULTI_TURN_CATEGORY = "multi_turn_base"
FILE_PREFIX = "BFCL_v4_"


@dataclass(frozen=True)
class SourceFile:
    """One data file with its bytes, so readers and the build stamp see the same content."""

    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def entries(self) -> list[dict[str, Any]]:
        """The JSON Lines records."""
        return [json.loads(line) for line in self.data.decode("utf-8").splitlines() if line.strip()]


def package_version() -> str:
    """Installed bfcl-eval version (raises PackageNotFoundError when it is missing)."""
    return metadata.version("bfcl-eval")


def _data_root() -> Traversable:
    return resources.files(PACKAGE) / "data"


def _read(*parts: str) -> SourceFile:
    node = _data_root()
    for part in parts:
        node = node / part
    return SourceFile("/".join(parts), node.read_bytes())


def question_file(category: str) -> SourceFile:
    """`BFCL_v4_<category>.json`: the task entries of one category."""
    return _read(f"{FILE_PREFIX}{category}.json")


def answer_file(category: str) -> SourceFile:
    """`possible_answer/BFCL_v4_<category>.json`: the ground truth of one category."""
    return _read("possible_answer", f"{FILE_PREFIX}{category}.json")


def func_doc_file(class_name: str) -> SourceFile:
    """`multi_turn_func_doc/<file>.json`: the function docs of one multi-turn class."""
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    return _read("multi_turn_func_doc", MULTI_TURN_FUNC_DOC_FILE_MAPPING[class_name])


def multi_turn_class(class_name: str) -> type:
    """The tool class itself, from `bfcl_eval.eval_checker.multi_turn_eval.func_source_code` (`MemoryAPI_vector`
    with the sentence-transformers stand-in where that package is missing: `benchmarks.bfcl.sentence_standin`)."""
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

    from benchmarks.bfcl.sentence_standin import import_tool_module

    return getattr(import_tool_module(CLASS_FILE_PATH_MAPPING[class_name]), class_name)


def multi_turn_tasks() -> Iterator[tuple[dict[str, Any], list[list[str]]]]:
    """(entry, ground-truth calls per turn) of every multi_turn_base task, in file order."""
    answers = {a["id"]: a["ground_truth"] for a in answer_file(MULTI_TURN_CATEGORY).entries()}
    for entry in question_file(MULTI_TURN_CATEGORY).entries():
        yield entry, answers[entry["id"]]
