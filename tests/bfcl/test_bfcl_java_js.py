"""simple_java and simple_javascript: toolkits whose parameters are strings of Java/JavaScript source (as BFCL's
checker reads them), call text the official tree-sitter decoder reads back, the scripted oracle at accuracy 1.0
over HTTP on everything but the two simple_java data bugs, and `bfcl evaluate` failing exactly the tasks we fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchmarks.bfcl.answer import export_answer
from benchmarks.bfcl.categories import NON_LIVE_CATEGORIES, category_group
from benchmarks.bfcl.export import read_results
from benchmarks.bfcl.languages import call_language
from benchmarks.bfcl.loader import SingleTurnTask, load_category
from benchmarks.bfcl.official import OFFICIAL_HANDLER, bfcl_venv
from benchmarks.bfcl.oracle import single_turn_oracle_calls
from benchmarks.bfcl.parse import FunctionCall
from benchmarks.bfcl.scoring import score_category, score_single_turn
from benchmarks.bfcl.source_calls import JAVA_WRAPPER, decode_source_calls, format_source_calls, source_value
from gecko.convert import from_bfcl
from gecko.convert.bfcl import bfcl_tool
from gecko.convert.gorilla import GORILLA_TYPES
from gecko.toolkits import load_toolkits
from gecko_cli.main import main as gecko_main
from inference.tools import CallRecord, ToolOutcome
from tests.bfcl.bfcl_support import DATA_BUG_IDS, run_single, sample_ids

CATEGORIES = ("simple_java", "simple_javascript")
COUNTS = {"simple_java": 100, "simple_javascript": 50}


def _tasks(category: str) -> list[SingleTurnTask]:
    tasks = load_category(category)
    assert all(isinstance(task, SingleTurnTask) for task in tasks)
    return [task for task in tasks if isinstance(task, SingleTurnTask)]


def _task(task_id: str) -> SingleTurnTask:
    return next(task for task in _tasks(task_id.rsplit("_", 1)[0]) if task.id == task_id)


def _record(call: FunctionCall) -> CallRecord:
    # an unresolved tool keeps the name the agent used: the original (dotted) name here
    return CallRecord("c", 0, call.name, "{}", dict(call.arguments), None, ToolOutcome(True, "{}"), 0.0)


def test_the_categories_are_non_live_with_their_languages() -> None:
    for category, language in zip(CATEGORIES, ("java", "javascript"), strict=True):
        assert category in NON_LIVE_CATEGORIES and category_group(category) == "non_live"
        assert call_language(category) == language and len(_tasks(category)) == COUNTS[category]
    assert call_language("simple_python") == "python"


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_parameter_is_a_string_of_source_and_gecko_validation_follows_the_checker(category: str) -> None:
    language = call_language(category)
    wrong_types = 0
    for task in _tasks(category):
        (doc,) = task.functions
        schema = bfcl_tool(doc, language=language).parameters
        declared = doc["parameters"]["properties"]
        for name, node in schema["properties"].items():
            assert node["type"] == "string" and node["x-bfcl-type"] == declared[name]["type"], (task.id, name)
            assert "in string representation" in node["description"]
        (oracle,) = single_turn_oracle_calls(task)
        jsonschema.validate(oracle.arguments, schema)  # the gold answer, as source strings, is accepted
        (expected,) = task.ground_truth or ()
        ((_, allowed),) = expected.items()
        typed = {param: options[0] for param, options in allowed.items() if options and options[0] != ""}
        if any(not isinstance(value, str) for value in typed.values()):
            wrong_types += 1  # the gold values as JSON (50, true, [..]) fail, as the checker's type check does
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate(typed, schema)
    assert wrong_types > 10


def test_geckos_own_validator_on_the_built_toolkit(tmp_path: Path) -> None:
    task = _task("simple_java_1")
    document = from_bfcl(list(task.functions), title=task.id, language="java")
    (tmp_path / f"{task.id}.json").write_text(json.dumps(document), encoding="utf-8")
    op = load_toolkits([tmp_path]).get(task.id, "SQLCompletionAnalyzer_makeProposalsFromObject")
    (oracle,) = single_turn_oracle_calls(task)
    assert op.args_validator.is_valid(oracle.arguments)
    assert not op.args_validator.is_valid({**oracle.arguments, "useShortName": True})
    assert not op.args_validator.is_valid({**oracle.arguments, "params": {"limit": 50, "schemaFilter": "public"}})


def test_a_python_doc_with_java_types_is_refused_but_converts_as_java() -> None:
    doc = _task("simple_java_1").functions[0]
    assert "HashMap" not in GORILLA_TYPES
    with pytest.raises(ValueError, match="unknown type 'HashMap'"):
        bfcl_tool(doc)
    assert bfcl_tool(doc, language="java").description.endswith("Note that the provided function is in Java 8 SDK syntax.")


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_exported_oracle_passes_every_task_but_the_data_bugs(category: str) -> None:
    language = call_language(category)
    failed = set()
    for task in _tasks(category):
        answer = export_answer([_record(call) for call in single_turn_oracle_calls(task)], task.functions, language)
        assert isinstance(answer, str) and decode_source_calls(answer, language)
        if not score_single_turn(task, answer).valid:
            failed.add(task.id)
    assert failed == {i for i in DATA_BUG_IDS if i.startswith(f"{category}_")}
    assert len(failed) == (2 if category == "simple_java" else 0)


def test_java_source_comes_back_as_the_checker_converts_it() -> None:
    task = _task("simple_java_1")
    (call,) = single_turn_oracle_calls(task)
    assert call.arguments == {"object": "Customers", "useShortName": "true",
                              "params": 'new HashMap<String, Object>() {{ put("limit", 50); put("schemaFilter", "public"); }}'}
    text = format_source_calls([call], task.functions, "java")
    assert text is not None and f'params={JAVA_WRAPPER}(new HashMap' in text and "useShortName=true" in text
    assert score_single_turn(task, text).valid
    # written as it is, the official decoder drops the anonymous class body: an empty map, which fails
    raw = text.replace(f"{JAVA_WRAPPER}(", "").replace("}})", "}}")
    (decoded,) = decode_source_calls(raw, "java")
    assert decoded.arguments["params"] == "new HashMap<String,Object>()"
    assert score_single_turn(task, raw).error_type == "value_error:dict_key"
    declared = task.functions[0]["parameters"]["properties"]
    assert source_value(42, {"type": "long"}, "java") == "42L" and source_value(0.5, {"type": "float"}, "java") == "0.5f"
    assert source_value(["a", "b"], {"type": "ArrayList", "items": {"type": "String"}}, "java") == \
        'new ArrayList<>(Arrays.asList("a", "b"))'
    assert source_value("docFields", declared["params"], "java") == "docFields"  # a variable is its own source


def test_a_string_with_quotes_and_sql_is_written_as_a_string_literal() -> None:
    task = _task("simple_java_2")
    (call,) = single_turn_oracle_calls(task)
    text = format_source_calls([call], task.functions, "java")
    assert text is not None and "source=\"SELECT * FROM Employee WHERE status = 'active'\"" in text
    assert score_single_turn(task, text).valid


def test_javascript_values_are_written_as_source() -> None:
    task = _task("simple_javascript_3")
    (call,) = single_turn_oracle_calls(task)
    assert call.arguments["coordinates"] == "[60, 30]"
    text = format_source_calls([call], task.functions, "javascript")
    assert text == '[submitAtCoordinate(action="submit", formId="loginForm", coordinates=[60, 30])]'
    assert score_single_turn(task, text).valid
    assert not score_single_turn(task, text.replace("[60, 30]", "[60, 31]")).valid


@pytest.mark.parametrize("result", [
    "[]", "I would rather not.", 42, None,
    [{"submitAtCoordinate": '{"action": "submit", "formId": "loginForm", "coordinates": "[60, 30]"}'}],
    "[submitAtCoordinate(action=\"submit\", formId=\"loginForm\", coordinates=[60, 30]",
])
def test_anything_but_decodable_call_text_fails(result: Any) -> None:
    score = score_single_turn(_task("simple_javascript_3"), result)
    assert not score.valid and str(score.error_type).startswith("ast_decoder:"), score


def test_a_non_string_argument_is_exported_so_that_it_fails_as_the_type_check_does() -> None:
    task = _task("simple_javascript_3")
    typed = _record(FunctionCall("submitAtCoordinate",
                                 {"action": "submit", "formId": "loginForm", "coordinates": [60, 30]}))
    answer = export_answer([typed], task.functions, "javascript")
    assert isinstance(answer, list)  # the function-calling form: not call text, so the decoder fails it
    assert score_single_turn(task, answer).error_type == "ast_decoder:decoder_wrong_output_format"


def test_the_scripted_oracle_over_http_scores_1_on_both(sample_gecko: str, tmp_path: Path) -> None:
    summary = run_single(sample_gecko, tmp_path, categories=CATEGORIES, model="scripted-oracle", num_tasks=12)
    assert summary.total.untested == 0 and summary.total.errored == 0
    categories = summary.evaluation.metrics["categories"]
    for category in CATEGORIES:
        assert summary.groups[category].done == 12
        assert categories[category]["accuracy"] == 1.0, category


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(1200)
def test_bfcl_evaluate_fails_and_passes_the_same_tasks_as_ours(sample_gecko: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    bfcl_venv().ensure()  # may build .venv-bfcl (minutes on a fresh machine)
    ids = tuple(i for category in CATEGORIES for i in sample_ids()[category])
    oracle = run_single(sample_gecko, tmp_path / "oracle", categories=CATEGORIES, model="scripted-oracle", ids=ids)
    noisy = run_single(sample_gecko, tmp_path / "noisy", categories=CATEGORIES, model="scripted-noisy", ids=ids,
                       max_retries=0)
    handler = OFFICIAL_HANDLER.replace("/", "_")
    for summary in (oracle, noisy):
        assert gecko_main(["score", "--official", str(summary.run_dir)]) == 0
        assert "the official tools agree with our figures" in capsys.readouterr().out
        for category in CATEGORIES:
            lines = (summary.run_dir / "score_official" / handler / "non_live" / f"BFCL_v4_{category}_score.json"
                     ).read_text(encoding="utf-8").splitlines()
            official_failed = {json.loads(line)["id"] for line in lines[1:]}
            (path,) = (summary.run_dir / "result").rglob(f"BFCL_v4_{category}_result.json")
            ours = score_category(category, read_results(path), partial=True)
            assert {entry.id for entry in ours.failures} == official_failed, (summary.run_dir, category)
            if summary is oracle:
                assert official_failed == {i for i in DATA_BUG_IDS if i.startswith(f"{category}_")}
            else:
                assert 0 < len(official_failed) < ours.total
