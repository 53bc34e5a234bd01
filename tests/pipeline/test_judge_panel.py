"""The judge panel: votes, failed judges excluded and reported, agreement on hand-made verdicts with known answers;
the settings that name a panel. Over HTTP with the stub: tests/integration/test_judge_panel_http.py."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gecko.pipeline.judge.panel import JudgePanel, combine, fleiss_kappa, pairwise_agreement
from gecko.pipeline.stages import ChecklistItem, ItemVerdict, JudgeFailure, JudgeInput, JudgeResult
from utils.settings import Settings

ITEMS = [ChecklistItem("1", "note saved"), ChecklistItem("2", "user told")]


class FakeJudge:
    """Says the given statuses (one per checklist item), or fails."""

    def __init__(self, engine: str, statuses: list[str] | None) -> None:
        self.engine, self.statuses = engine, statuses

    async def checklist(self, task, previous_tasks, tools, usage) -> list[ChecklistItem]:
        if self.statuses is None:
            raise JudgeFailure("down")
        return [ChecklistItem("1", f"{self.engine}: {task}")]

    async def judge(self, data: JudgeInput) -> JudgeResult:
        if self.statuses is None:
            raise JudgeFailure("timed out")
        return JudgeResult([ItemVerdict(i.id, i.description, s, f"{self.engine} says {s}")
                            for i, s in zip(data.checklist, self.statuses, strict=True)], self.engine)


def data() -> JudgeInput:
    return JudgeInput("Save a note and tell the user", list(ITEMS), {}, [], "Done.", [])


def test_votes() -> None:
    assert combine(["success", "success", "failed"], "majority") == "success"
    assert combine(["success", "failed"], "majority") == "unknown"  # a tie is no majority: not a success
    assert combine(["success", "failed", "unknown"], "majority") == "unknown"
    assert combine(["success", "success"], "unanimous") == "success"
    assert combine(["success", "unknown"], "unanimous") == "unknown"
    assert combine(["success", "failed"], "unanimous") == "failed"
    assert combine(["failed", "success"], "any") == "success"
    assert combine(["failed", "unknown"], "any") == "failed"


def test_agreement_known_answers() -> None:
    # 2 items, 3 judges: [s,s,s] and [s,s,f]. Pairs agreeing: 3 + 1 of 6. Fleiss: P̄ = (1 + 1/3) / 2 = 2/3,
    # p_s = 5/6, p_f = 1/6, P_e = 26/36, kappa = (2/3 - 13/18) / (5/18) = -0.2
    ratings = [["success"] * 3, ["success", "success", "failed"]]
    assert pairwise_agreement(ratings) == round(4 / 6, 6)
    assert fleiss_kappa(ratings) == -0.2
    assert fleiss_kappa([["success", "success"], ["failed", "failed"]]) == 1.0  # perfect agreement beyond chance
    assert fleiss_kappa([["success", "success"]]) is None  # one category only: undefined
    assert fleiss_kappa([["success"]]) is None and pairwise_agreement([["success"]]) is None


async def test_the_panel_votes_and_reports_every_judge() -> None:
    panel = JudgePanel([FakeJudge("a", ["success", "failed"]), FakeJudge("b", ["success", "success"]),
                        FakeJudge("c", ["success", "failed"])])
    result = await panel.judge(data())
    assert [i.status for i in result.items] == ["success", "failed"] and not result.success
    assert result.engine == "a,b,c" and result.items[1].reasoning.startswith("2 of 3 judges: failed (majority).")
    assert [j["model"] for j in result.panel["judges"]] == ["a", "b", "c"] and result.panel["excluded"] == []
    # [s,s,s] and [f,s,f]: P̄ = 2/3 as above, but p_s = 4/6, p_f = 2/6, P_e = 5/9: kappa = (1/9) / (4/9) = 0.25
    assert result.panel["agreement"] == {"judges": 3, "pairwise": round(4 / 6, 6), "fleiss_kappa": 0.25}
    lenient = await JudgePanel(panel.judges, "any").judge(data())
    assert lenient.success


async def test_a_failed_judge_is_excluded_and_all_failing_is_a_failure() -> None:
    panel = JudgePanel([FakeJudge("a", None), FakeJudge("b", ["success", "success"]),
                        FakeJudge("c", ["success", "success"])], "unanimous")
    result = await panel.judge(data())
    assert result.success and result.panel["excluded"] == [{"model": "a", "error": "timed out"}]
    assert result.panel["agreement"]["judges"] == 2
    items = await panel.checklist("Save", [], [], [])
    assert items[0].description == "b: Save"  # the first judge that could make one
    with pytest.raises(JudgeFailure, match="every judge of the panel failed: a: timed out; b: timed out"):
        await JudgePanel([FakeJudge("a", None), FakeJudge("b", None)]).judge(data())
    with pytest.raises(ValueError):
        JudgePanel([FakeJudge("a", [])])


def test_settings_name_a_panel_only_where_the_role_has_one(tmp_path) -> None:
    assert Settings(state_dir=tmp_path, judge_model="m1, m2", judge_vote="any").judge_vote == "any"
    with pytest.raises(ValidationError, match="only --judge-model may name a panel"):
        Settings(state_dir=tmp_path, response_model="m1,m2")
    with pytest.raises(ValidationError, match="each model once"):
        Settings(state_dir=tmp_path, judge_model="m1,m1")
    with pytest.raises(ValidationError, match="are engines"):
        Settings(state_dir=tmp_path, judge_model="rules,m1")
    with pytest.raises(ValidationError):
        Settings(state_dir=tmp_path, judge_vote="plurality")
