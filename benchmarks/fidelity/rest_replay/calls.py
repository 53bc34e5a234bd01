"""Seeded call sequences over a document's resources: every operation, valid and invalid calls, existing and
missing ids.

A sequence addresses records by *creation order* (`Ref(resource, index)`), never by a server's id: each side of
the replay resolves the index to the id that side gave the record, so the real server and Gecko are each
asked about what they themselves created. The generator keeps the records a faithful server would hold (what
was sent), to pick existing ids, filter values and search words from them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from benchmarks.fidelity.rest_replay.contract import Operation, Resource

Intent = Literal["valid", "missing", "invalid"]
Kind = Literal["create", "read", "list", "replace", "update", "delete"]
_WORDS = ("river", "stone", "maple", "cloud", "ember", "harbor", "meadow", "falcon", "copper", "willow",
          "signal", "lantern", "orbit", "canyon", "thistle", "velvet")
_WEIGHTS: dict[str, float] = {"create": 0.22, "read": 0.13, "list": 0.16, "replace": 0.1, "update": 0.11,
                              "delete": 0.08, "missing": 0.09, "invalid": 0.11}


@dataclass(frozen=True)
class Ref:
    """A record by creation order: `index` None is an id no server issued (`token` tells them apart)."""

    resource: str
    index: int | None
    token: int = 0


@dataclass(frozen=True)
class Call:
    """One call of a sequence."""

    kind: Kind
    resource: str
    intent: Intent
    ref: Ref | None = None
    body: Any = None
    """The JSON body; values at link fields are `Ref`s."""
    query: Mapping[str, Any] = field(default_factory=dict)
    creates: int | None = None
    """A create: the creation index of the record it makes (valid creates only)."""


@dataclass(frozen=True)
class Sequence:
    """Records to seed both sides with (bodies of creates, in order), then the calls."""

    number: int
    seed: tuple[tuple[str, Mapping[str, Any]], ...]
    calls: tuple[Call, ...]


@dataclass
class _World:
    """What a faithful server holds: per resource, records by creation index."""

    records: dict[str, dict[int, dict[str, Any]]]
    created: dict[str, int]
    deleted: dict[str, list[int]]


def _word(rng: random.Random) -> str:
    return f"{rng.choice(_WORDS)}-{rng.randrange(1000)}"


def value(schema: Mapping[str, Any], rng: random.Random) -> Any:
    """A random value valid for a simple schema (enums, strings, numbers, booleans, arrays of those)."""
    if "enum" in schema:
        return rng.choice(list(schema["enum"]))
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        return rng.randint(low, max(low, int(schema.get("maximum", low + 500))))
    if kind == "number":
        return round(rng.uniform(float(schema.get("minimum", 0)), float(schema.get("maximum", 500))), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        return [value(items, rng) for _ in range(rng.randint(0, min(3, int(schema.get("maxItems", 3)))))]
    if kind == "object":
        return {}
    return _word(rng)


def _wrong(schema: Mapping[str, Any]) -> Any:
    """A value of the wrong type for `schema`."""
    kind = schema.get("type")
    return {"integer": "not-a-number", "number": "not-a-number", "boolean": "maybe", "array": "not-a-list",
            "object": "not-an-object"}.get(str(kind), 12345)


class SequenceMaker:
    """Builds the sequences of one run: same `seed`, same sequences."""

    def __init__(self, resources: list[Resource], seed: int, calls: int) -> None:
        self.resources = {r.name: r for r in resources}
        self.seed = seed
        self.length = calls

    def make(self, number: int) -> Sequence:
        """Sequence `number`."""
        rng = random.Random(f"{self.seed}/{number}")
        world = _World({n: {} for n in self.resources}, dict.fromkeys(self.resources, 0),
                       {n: [] for n in self.resources})
        seed: list[tuple[str, Mapping[str, Any]]] = []
        for name in self._creation_order():
            for _ in range(rng.randint(1, 3)):
                body = self._body(self.resources[name].create, name, world, rng)
                if body is not None:
                    seed.append((name, body))
                    self._store(world, name, body)
        calls = [self._call(world, rng) for _ in range(self.length)]
        return Sequence(number, tuple(seed), tuple(calls))

    def _creation_order(self) -> list[str]:
        """Resources others link to first."""
        return sorted(self.resources, key=lambda n: len(self.resources[n].links))

    def _store(self, world: _World, name: str, body: Mapping[str, Any]) -> int:
        index = world.created[name]
        world.created[name] += 1
        world.records[name][index] = dict(body)
        return index

    def _alive(self, world: _World, name: str) -> list[int]:
        return sorted(world.records[name])

    def _body(self, operation: Operation, name: str, world: _World, rng: random.Random,
              partial: bool = False) -> dict[str, Any] | None:
        """A valid body: the required fields, each optional one with even odds (`partial`: 1-2 fields)."""
        schema = operation.body or {}
        props: Mapping[str, Any] = schema.get("properties") or {}
        required = [k for k in schema.get("required") or () if k in props]
        if partial:
            chosen = rng.sample(sorted(props), k=min(len(props), rng.randint(1, 2)))
        else:
            chosen = [k for k in props if k in required or rng.random() < 0.5]
        body: dict[str, Any] = {}
        links = self.resources[name].links
        for key in chosen:
            if key in links:
                alive = self._alive(world, links[key])
                if not alive:
                    if key in required:
                        return None
                    continue
                body[key] = Ref(links[key], rng.choice(alive))
            else:
                body[key] = value(props[key], rng)
        return body

    def _kind(self, rng: random.Random) -> str:
        kinds, weights = zip(*_WEIGHTS.items(), strict=True)
        return rng.choices(kinds, weights)[0]

    def _call(self, world: _World, rng: random.Random) -> Call:
        for _ in range(20):
            call = self._try(world, rng, rng.choice(sorted(self.resources)), self._kind(rng))
            if call is not None:
                return call
        return Call("list", next(iter(self.resources)), "valid")

    def _try(self, world: _World, rng: random.Random, name: str, kind: str) -> Call | None:
        res = self.resources[name]
        ops = res.operations()
        alive = self._alive(world, name)
        if kind == "create":
            body = self._body(res.create, name, world, rng)
            if body is None:
                return None
            return Call("create", name, "valid", body=body, creates=self._store(world, name, body))
        if kind == "list":
            return Call("list", name, "valid", query=self._query(res, world, rng)) if res.listing else None
        if kind == "missing":
            target = rng.choice([k for k in ("read", "replace", "update", "delete") if k in ops])
            deleted = world.deleted[name]
            ref = Ref(name, rng.choice(deleted)) if deleted and rng.random() < 0.4 else \
                Ref(name, None, rng.randrange(1_000_000))
            body = self._change_body(res, target, name, world, rng)
            if body is None and target in ("replace", "update"):
                return None
            return Call(target, name, "missing", ref=ref, body=body)
        if kind == "invalid":
            return self._invalid(res, world, rng)
        if kind not in ops or not alive:
            return None
        index = rng.choice(alive)
        ref = Ref(name, index)
        if kind == "delete":
            del world.records[name][index]
            world.deleted[name].append(index)
            return Call("delete", name, "valid", ref=ref)
        body = self._change_body(res, kind, name, world, rng)
        if body is None and kind in ("replace", "update"):
            return None  # a body the document allows cannot be made now (a required link with nothing to link to)
        if kind == "replace" and body is not None:
            world.records[name][index] = dict(body)
        elif kind == "update" and body is not None:
            world.records[name][index].update(body)
        return Call(kind, name, "valid", ref=ref, body=body)  # type: ignore[arg-type]

    def _change_body(self, res: Resource, kind: str, name: str, world: _World,
                     rng: random.Random) -> dict[str, Any] | None:
        if kind == "replace" and res.replace is not None:
            return self._body(res.replace, name, world, rng)
        if kind == "update" and res.update is not None:
            return self._body(res.update, name, world, rng, partial=True)
        return None

    def _invalid(self, res: Resource, world: _World, rng: random.Random) -> Call | None:
        """A body the document forbids: a required field left out, or a field of the wrong type."""
        alive = self._alive(world, res.name)
        choices = [("create", res.create)] + ([("replace", res.replace)] if res.replace and alive else []) + \
            ([("update", res.update)] if res.update and alive else [])
        kind, operation = rng.choice(choices)
        assert operation is not None
        body = self._body(operation, res.name, world, rng, partial=kind == "update")
        schema = operation.body or {}
        props: Mapping[str, Any] = schema.get("properties") or {}
        required = [k for k in schema.get("required") or () if k in props]
        if body is None or not props:
            return None
        if required and rng.random() < 0.5:
            body.pop(rng.choice(required), None)
        else:
            key = rng.choice([k for k in sorted(props) if k not in res.links] or sorted(props))
            body[key] = _wrong(props[key])
        ref = Ref(res.name, rng.choice(alive)) if kind != "create" else None
        return Call(kind, res.name, "invalid", ref=ref, body=body)  # type: ignore[arg-type]

    def _query(self, res: Resource, world: _World, rng: random.Random) -> dict[str, Any]:
        """List parameters by role: none, a page size (and a page), a sort, a search word or a field filter."""
        assert res.listing is not None
        roles: dict[str, list[Any]] = {}
        for param in res.listing.params:
            roles.setdefault(param.role, []).append(param)
        records = list(world.records[res.name].values())
        query: dict[str, Any] = {}
        mode = rng.choice(["plain", "page_size", "page", "sort", "search", "filter", "filter_page"])
        if mode in ("page_size", "page", "filter_page") and "page_size" in roles:
            query[roles["page_size"][0].name] = rng.randint(1, 4)
            if mode == "page" and "page" in roles:
                query[roles["page"][0].name] = rng.randint(1, 3)
        if mode == "sort" and "sort" in roles:
            sort = roles["sort"][0]
            fields = list(sort.schema.get("enum") or [k for k, v in (res.record.get("properties") or {}).items()
                                                        if (v or {}).get("type") in ("string", "integer")])
            query[sort.name] = rng.choice(fields)
            if "order" in roles:
                query[roles["order"][0].name] = rng.choice(["asc", "desc"])
        if mode == "search" and "search" in roles:
            words = [v.split("-")[0] for r in records for v in r.values() if isinstance(v, str)]
            query[roles["search"][0].name] = rng.choice(words) if words and rng.random() < 0.8 else _word(rng)
        if mode in ("filter", "filter_page") and "filter" in roles:
            param = rng.choice(roles["filter"])
            seen = [r[param.name] for r in records if param.name in r]
            query[param.name] = rng.choice(seen) if seen and rng.random() < 0.8 else value(param.schema, rng)
        return query
