"""Scoring of open-world trajectories: constraint checks on the agent's calls, toolkits found, the roll-up; and the
planner's sub-goal graph."""

from __future__ import annotations

from benchmarks.openworld.scoring import (
    CallFact,
    check_constraint,
    constraint_results,
    summarize,
    toolkits_found,
)
from benchmarks.openworld.tasks.model import TaskConstraint
from inference.agents.planner_actor import PlanGraph, SubGoal, parse_plan
from tests.openworld.handmade import handmade_tasks


def _call(tool: str, ok: bool = True, toolkit: str = "tau2-airline", **arguments) -> CallFact:
    return CallFact(toolkit, tool, arguments, ok)


def _constraint(kind: str, **check) -> TaskConstraint:
    return TaskConstraint(id="c", kind=kind, text="t", check=check)


def test_budget_counts_failed_calls_and_the_other_kinds_read_only_successful_ones():
    calls = [_call("get_reservation_details", ok=False), _call("cancel_reservation"), _call("get_reservation_details")]
    assert check_constraint(_constraint("budget", max_calls=3), calls) is True
    assert check_constraint(_constraint("budget", max_calls=2), calls) is False
    # the failed lookup does not count: the first successful one comes after the cancellation
    order = _constraint("order", before="get_reservation_details", after="cancel_reservation")
    assert check_constraint(order, calls) is False
    assert check_constraint(order, calls[1:][::-1]) is True
    assert check_constraint(order, [_call("cancel_reservation")]) is False


def test_argument_checks_need_a_successful_call_and_every_one_to_comply():
    fmt = _constraint("format", tool="search_direct_flight", argument="origin", pattern="^[A-Z]{3}$")
    assert check_constraint(fmt, [_call("search_direct_flight", origin="JFK")]) is True
    assert check_constraint(fmt, [_call("search_direct_flight", origin="JFK"),
                                  _call("search_direct_flight", origin="New York")]) is False
    assert check_constraint(fmt, [_call("search_direct_flight", ok=False, origin="JFK")]) is False
    pref = _constraint("preference", tool="square_root", argument="precision", value=2)
    assert check_constraint(pref, [_call("square_root", toolkit="bfcl-mt-mathapi", number=4, precision=2)]) is True
    assert check_constraint(pref, [_call("square_root", toolkit="bfcl-mt-mathapi", number=4, precision=3)]) is False
    deadline = _constraint("deadline", tool="search_direct_flight", argument="date", not_after="2024-05-30")
    assert check_constraint(deadline, [_call("search_direct_flight", date="2024-05-30")]) is True
    assert check_constraint(deadline, [_call("search_direct_flight", date="2024-06-01")]) is False
    assert check_constraint(_constraint("preference"), [_call("x")]) is None


def test_a_reference_meets_its_own_constraints_and_toolkits_found_is_a_share():
    for task in handmade_tasks(4):
        calls = [CallFact(r.toolkit, r.tool, r.arguments, True) for r in task.reference]
        assert all(c["passed"] is True for c in constraint_results(task, calls)), task.id
    task = handmade_tasks(1)[0]
    assert toolkits_found(task, ["tau2-airline", "bfcl-math"]) == 0.5
    assert toolkits_found(task, list(task.toolkits)) == 1.0


def test_summarize_rolls_up_per_group_and_overall():
    records = [
        {"group": "a", "success": True, "judge_score": 1.0, "toolkits_found": 1.0, "calls": 3, "replans": 1,
         "constraints": [{"passed": True}, {"passed": None}]},
        {"group": "a+faults", "success": False, "judge_score": 0.5, "toolkits_found": 0.5, "calls": 5, "replans": 0,
         "constraints": [{"passed": False}]},
    ]
    report = summarize(records)
    assert report["overall"] == {"tasks": 2, "success": 0.5, "judge_score": 0.75, "constraints_checked": 2,
                                 "constraints_passed": 0.5, "toolkits_found": 0.75, "mean_calls": 4.0, "replans": 1}
    assert set(report["groups"]) == {"a", "a+faults"} and report["groups"]["a"]["constraints_passed"] == 1.0


def test_the_plan_graph_runs_in_dependency_order_and_retries_take_the_failed_steps_place():
    graph = PlanGraph([SubGoal("s1", "one"), SubGoal("s2", "two", ("s1",)), SubGoal("s3", "three", ("s2",))])
    first = graph.ready()
    assert first is not None and first.id == "s1"
    first.status = "done"
    second = graph.ready()
    assert second is not None and second.id == "s2"
    second.status = "failed"
    graph.replace_pending([SubGoal("s2.r1", "two again", ("s1",)), *[s for s in graph.subgoals if s.status == "pending"]])
    graph.redirect("s2", "s2.r1")
    retry = graph.ready()
    assert retry is not None and retry.id == "s2.r1"
    assert [s.depends_on for s in graph.subgoals if s.id == "s3"] == [("s2.r1",)]
    retry.status = "done"
    third = graph.ready()
    assert third is not None and third.id == "s3"


def test_a_planner_reply_that_is_not_a_graph_becomes_one_subgoal():
    reply = 'Plan: {"subgoals": [{"id": "a", "goal": "look up"}, {"id": "b", "goal": "cancel", "depends_on": ["a"]}]}'
    assert [(s.id, s.goal, s.depends_on) for s in parse_plan(reply, "task")] == [
        ("a", "look up", ()), ("b", "cancel", ("a",))]
    assert [(s.id, s.goal) for s in parse_plan("Done.", "the whole task")] == [("s1", "the whole task")]
    assert [s.goal for s in parse_plan('{"subgoals": [{"goal": ""}]}', "t")] == ["t"]
