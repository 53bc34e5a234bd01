"""The server role table drives the engines, `Engines`, `/health` and the `none` rule; engines honour their Protocols."""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from gecko.pipeline.engines import build_engines, role_engines
from gecko.pipeline.stages import EngineBuild, Engines
from utils.llm import LLMClient
from utils.llm_stub.testing import run_stub, stub_client
from utils.roles import ENGINE_NONE, ENGINE_RULES, SERVER_ROLES
from utils.settings import Settings


def _protocol(role_name: str) -> type:
    """The Protocol of a role, read from the type of its `Engines` field."""
    hint = typing.get_type_hints(Engines, localns={"LLMClient": LLMClient})[role_name]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def test_engines_has_one_field_per_role_in_table_order() -> None:
    names = [f.name for f in dataclasses.fields(Engines) if f.name != "llm_client"]
    assert names == [role.name for role in SERVER_ROLES]


async def test_every_engine_declares_what_its_protocol_declares(tmp_path: Path) -> None:
    with run_stub() as stub:
        client = stub_client(stub)
        for role in SERVER_ROLES:
            declared = set(typing.get_type_hints(_protocol(role.name)))
            builders = role_engines(role)
            rules = builders.rules()
            llm = builders.llm(EngineBuild(role=role, model=stub.model(), client=client, fallback=rules,
                                           settings=Settings(state_dir=tmp_path), toolkit_info={}))
            for engine in (rules, llm):
                if engine is not None:
                    assert {name for name in declared if not hasattr(engine, name)} == set(), (role.name, engine)
        await client.aclose()


@pytest.mark.parametrize("role", SERVER_ROLES, ids=lambda r: r.name)
def test_none_is_refused_exactly_where_the_table_says(role, tmp_path: Path) -> None:
    values = {f"{role.name}_model": ENGINE_NONE, "state_dir": tmp_path}
    if role.none_allowed:
        engines = build_engines(Settings(**values))
        assert getattr(engines, role.name) is None and engines.engine_of(role) == ENGINE_NONE
    else:
        with pytest.raises(ValidationError, match=f"--{role.name}-model cannot be 'none'"):
            Settings(**values)


def test_rules_default_is_offline(tmp_path: Path) -> None:
    engines = build_engines(Settings(state_dir=tmp_path))
    assert engines.llm_client is None
    assert {role.name: engines.engine_of(role) for role in SERVER_ROLES} == {
        "validation": ENGINE_NONE, "response": ENGINE_RULES, "state": ENGINE_RULES, "judge": ENGINE_RULES}


def test_health_lists_every_role_from_the_table(make_client) -> None:
    body = make_client(state_model="none").get("/health").json()
    assert list(body["roles"]) == [role.public for role in SERVER_ROLES] == ["validator", "responder", "state", "judge"]
    assert body["roles"]["state"] == {"model": "none", "engine": "none"} and not body["state_model_enabled"]
    assert body["roles"]["responder"] == {"model": "rules", "engine": "rules"} and body["offline"]


def test_a_role_without_its_settings_field_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Settings` declares the per-role fields (typed, for the checker); a table row without one stops the import."""
    from utils import settings as settings_module
    from utils.roles import ServerRole

    extra = ServerRole("critic", "critic", SERVER_ROLES[0].calls, "a critique", rules_means="nothing")
    settings_module._check_role_fields()  # the real table: every row has its field
    monkeypatch.setattr(settings_module, "SERVER_ROLES", (*SERVER_ROLES, extra))
    with pytest.raises(TypeError, match="critic_model: str"):
        settings_module._check_role_fields()


def test_panel_models_keep_a_generic_names_declared_capabilities() -> None:
    from utils.roles import panel_models

    generic = "openai-compatible:m@http://127.0.0.1:1/v1#tools,json_schema=off,json_mode"
    assert panel_models(generic) == [generic]
    assert panel_models(f"gpt-4.1, {generic},b") == ["gpt-4.1", generic, "b"]
    assert panel_models("a,b") == ["a", "b"] and panel_models("a") == ["a"]
