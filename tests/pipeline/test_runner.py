"""The runner: deferred state updates keep the session until they commit."""

from __future__ import annotations

import asyncio

from gecko.pipeline.judge.rules import RulesJudge
from gecko.pipeline.runner import CallRunner
from gecko.pipeline.stages import Engines, StateChange
from gecko.pipeline.synthesize.rules import RulesSynthesizer
from gecko.sessions import SessionRecord, SessionStore, open_store
from gecko.toolkits import Operation, load_toolkits
from tests.conftest import TOOLKITS_DIR


async def _memory_store_with_session(session_id: str) -> SessionStore:
    store = open_store("memory", sqlite_path=None, ttl=60, history_limit=100)
    await store.open()
    await store.create(SessionRecord(id=session_id))
    return store


def _create_note() -> Operation:
    return load_toolkits([TOOLKITS_DIR]).get("notes", "create_note")


class SlowUpdater:
    """Deferred updater that waits for a signal, then counts writes in the state."""

    engine = "fake-llm"
    deferred = True
    needs_recent_calls = False

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.seen: list[int] = []

    async def update(self, ctx, response):
        self.seen.append(ctx.state.get("n", 0))
        await self.gate.wait()
        return StateChange(state={**ctx.state, "n": ctx.state.get("n", 0) + 1}, patch=[{"op": "add", "path": "/n", "value": ctx.state.get("n", 0) + 1}],
                           engine=self.engine)


async def test_deferred_update_runs_after_response_and_next_call_sees_it(tmp_path):
    store = await _memory_store_with_session("s")
    updater = SlowUpdater()
    runner = CallRunner(store, Engines(None, RulesSynthesizer(), updater, RulesJudge()))
    op = _create_note()

    first = await runner.run("s", op, {"title": "a", "body": "b"})
    assert first.status == 200 and first.state_pending and first.state_version == 1
    assert (await store.get("s")).state == {}  # not yet applied
    second = asyncio.create_task(runner.run("s", op, {"title": "c", "body": "d"}))
    await asyncio.sleep(0.01)
    assert not second.done()  # waits for the first call's deferred update
    updater.gate.set()
    await second
    await runner.drain()
    assert updater.seen == [0, 1]  # the second call saw the first update
    record = await store.get("s")
    assert record.state == {"n": 2} and record.version == 2
    history = await store.history("s", 10, 0)
    assert [h["engines"]["state"]["deferred"] for h in history] == [True, True]


class RecentCallsSynthesizer(RulesSynthesizer):
    """Rules responses; records how many earlier calls each call was shown (what LLM stages see)."""

    needs_recent_calls = True

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[int] = []

    async def synthesize(self, ctx):
        self.seen.append(len(ctx.recent_calls))
        return await super().synthesize(ctx)


async def test_queued_call_sees_previous_call_whose_write_is_still_in_flight():
    """A commit hands the session on before its write is stored; the next call's recent calls include it.

    Regression: the LLM reply cache stopped replaying because recent calls depended on write timing.
    """
    store = await _memory_store_with_session("s")
    slow_commit = store._commit

    async def delayed_commit(*args, **kwargs):
        await asyncio.sleep(0.02)
        return await slow_commit(*args, **kwargs)

    store._commit = delayed_commit
    synthesizer = RecentCallsSynthesizer()
    runner = CallRunner(store, Engines(None, synthesizer, None, RulesJudge()))
    op = _create_note()
    outcomes = await asyncio.gather(*(runner.run("s", op, {"title": f"t{i}", "body": "b"}) for i in range(4)))
    assert [o.status for o in outcomes] == [200] * 4
    assert synthesizer.seen == [0, 1, 2, 3]


async def test_an_invalid_call_never_waits_on_a_pending_llm_state_update(tmp_path):
    """It changes no state: answered at once (it used to wait for the update, 241.8 s once), recorded in order."""
    store = await _memory_store_with_session("s")
    updater = SlowUpdater()
    runner = CallRunner(store, Engines(None, RulesSynthesizer(), updater, RulesJudge()))
    op = _create_note()

    first = await runner.run("s", op, {"title": "a", "body": "b"})
    assert first.state_pending
    invalid = await asyncio.wait_for(runner.run("s", op, {"title": 7}), timeout=2)
    assert invalid.status == 422 and invalid.violations and invalid.state_version == 0
    assert not updater.gate.is_set() and len(await store.history("s", 10, 0)) == 0  # the update still holds it
    updater.gate.set()
    await runner.drain()
    history = await store.history("s", 10, 0)
    assert [h["status"] for h in history] == [200, 422]
    assert history[1]["state_version"] == 1

    free = await runner.run("s", op, {"body": "no title"})  # a free session: recorded before the answer
    assert free.status == 422 and [h["status"] for h in await store.history("s", 10, 0)][-1] == 422
