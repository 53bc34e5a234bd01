"""BFCL multi-turn tasks as RL episodes: the suite's specs, and oracle episodes on a real Gecko."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.bfcl.env_suite import episode_spec, multi_turn_episodes, multi_turn_tasks, oracle_actions
from inference.env import run_episodes, scripted_policy, summarize
from inference.gecko.client import GeckoClient
from tests.bfcl.multi_support import multi_turn_gecko


def test_every_multi_turn_task_is_an_episode() -> None:
    specs = multi_turn_episodes()
    assert len(specs) == 800 and len({s.id for s in specs}) == 800
    task = multi_turn_tasks(["multi_turn_base"])[0]
    spec = episode_spec(task)
    assert spec.toolkits == list(task.involved_classes) and spec.state == dict(task.initial_config)
    assert 1 + len(spec.follow_ups) == len(task.turns)
    actions = oracle_actions(task)
    assert sum(1 for a in actions if "answer" in a) == len(task.turns)
    assert len(actions) <= spec.max_steps


@pytest.fixture(scope="module")
def gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with multi_turn_gecko(tmp_path_factory.mktemp("env-mt-gecko")) as url:
        yield url


@pytest.mark.integration
async def test_oracle_episodes_run_to_the_end(gecko: str) -> None:
    tasks = {t.id: t for t in multi_turn_tasks(["multi_turn_base"])[:10]}
    specs = [episode_spec(t) for t in tasks.values()]
    async with GeckoClient(gecko) as client:
        results = await run_episodes(client, specs, lambda s: scripted_policy(oracle_actions(tasks[str(s.id)])),
                                     concurrency=5)
    summary = summarize(results)
    assert summary["untested"] == 0 and summary["truncated"] == 0, [r.error for r in results]
    assert all(r.terminated for r in results)
    assert summary["steps"] == sum(len(oracle_actions(t)) for t in tasks.values())
