"""Deterministic JSON Schema instance generator: Gecko's rules synthesizer and the LLM stub both use it.

Given a self-contained schema (local `$ref`s, usually under root `$defs`) and a seed, produce a value that
validates. Identifier-like fields (`id`, `*_id`, `*code`, `*number`) are derived from the seed, so
different arguments give different ids; a field named like an argument echoes the argument when it fits.
`oneOf`/`anyOf` prefer branches that are not error shapes (a branch whose only required/declared
property is `error`). `generate_instance` runs the generator with salted seeds until a value validates.
What the generator needs of each schema it meets is worked out once and kept in the `SchemaCache`
(`utils.schema.nodes`), so a call after the first reads it instead of looking it up again.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import math
import random
import re
import string
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from jsonschema.protocols import Validator

from utils.schema.fastcheck import FastCheck
from utils.schema.fieldnames import Pick, value_for_name
from utils.schema.formats import FORMAT_CHECKER
from utils.schema.nodes import FALSE, ODD, TRIVIAL, ArrayFacts, ObjectFacts, SchemaNode, StringFacts
from utils.schema.patterns import SafeValidator, search
from utils.schema.refs import SchemaRefError, pointer_get
from utils.schema.samples import pattern_samples

_NO_DEFS: Mapping[str, Any] = MappingProxyType({})
_ANY: dict[str, Any] = {}
"""The schema of a value of any kind, where none is declared (one object, so that its node is made once)."""
MAX_DEPTH = 8
PATTERN_SAMPLES = 24
RICH_DEPTH = 4
"""Shallower than this, optional properties are filled in and arrays get an item; deeper, only what is required."""
MAX_REF_HOPS = 64
LAZY_CHECK_DEFS = 64
"""A sub-schema check that reaches more definitions than this runs on the Python validator (see `_valid`)."""
MAX_GENERATED_SIZE = 1_048_576
"""Most characters (of strings) plus values one generated instance may hold: a response schema that asks for more
(`minItems: 5000`, each item with `minItems: 5000`) is refused in microseconds instead of being built."""
MAX_NODES = 50_000
"""Schema nodes a `SchemaCache` keeps (about 600 bytes each); past it, it forgets the least recently used root
schemas' nodes down to half. One response of each of the open-world pool's 9,802 operations made 167,635 nodes and
18,284 compiled checks (147 MB together)."""
ATTEMPTS = 8
"""Generator runs of `generate_instance`, each with a salted seed; the first half may echo arguments."""
CAREFUL_ATTEMPTS = 2
"""The last runs check each optional property against its own declaration and leave out what fails it."""
ID_KEY = re.compile(r"(^id$|_id$|Id$|ID$|(^|_)code$|Code$|(^|_)number$|Number$|_no$)")
WORDS = ("alpha", "bravo", "cedar", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper",
         "kestrel", "lumen", "maple", "nimbus", "onyx", "pine", "quartz", "river", "sierra", "tundra")


_PROBES: tuple[Any, ...] = ("", 0, 0.5, True, None, [], {})
"""Values of every JSON type, tried to make an object fail a `oneOf` branch it should not match."""


class UnsatisfiableSchema(ValueError):
    """No instance could be generated that validates against the schema (or a `$ref` does not resolve)."""


class ResponseTooLarge(UnsatisfiableSchema):
    """Every instance of the schema is larger than `MAX_GENERATED_SIZE`."""


@dataclass
class SchemaCache:
    """Compiled sub-schema checks, regex samples and schema nodes, reusable across runs while the schemas stay alive.

    Keys are `id()`s of schema objects, so keep one cache per set of long-lived schemas (the rules
    synthesizer keeps one per process); each entry also holds its schemas, so an id is never reused.
    """

    checks: dict[tuple[int, int], tuple[FastCheck | Validator, Any, Any]] = field(default_factory=dict)
    patterns: dict[str, list[str]] = field(default_factory=dict)
    pools: dict[tuple[str, int, int | None], list[str]] = field(default_factory=dict)
    """Per pattern and length limits: the samples that fit them (all of them when none does)."""
    roots: dict[int, RootEntry] = field(default_factory=dict)
    """Per root schema (by id), least recently used first: its schemas' nodes (`utils.schema.nodes`)."""
    node_count: int = 0

    def entry(self, root: Any) -> RootEntry:
        """What is kept for the schemas under `root` (a `$ref` resolves against its root, so a node belongs to one),
        now the most recently used."""
        entry = self.roots.pop(id(root), None) or RootEntry(root)
        self.roots[id(root)] = entry
        return entry

    def count_node(self) -> None:
        """Count a new node; past `MAX_NODES`, forget the least recently used roots' nodes down to half of it.

        The checks compiled while their runs went go too: some are of schemas a node made (a `$ref` merged with
        its siblings, an `allOf` merged), which nodes made again replace, so they would never be used again."""
        self.node_count += 1
        if self.node_count <= MAX_NODES:
            return
        while self.node_count > MAX_NODES // 2 and len(self.roots) > 1:  # the last is the root being generated
            entry = self.roots.pop(next(iter(self.roots)))
            self.node_count -= len(entry.nodes)
            for key in entry.checks:
                self.checks.pop(key, None)


@dataclass(eq=False)
class RootEntry:
    """A root schema (kept alive: its id is its key), the nodes of the schemas under it, and the checks compiled
    during its runs (by their key in `SchemaCache.checks`)."""

    root: Any
    nodes: dict[int, SchemaNode] = field(default_factory=dict)
    checks: list[tuple[int, int]] = field(default_factory=list)


def is_error_branch(schema: Any) -> bool:
    """A oneOf/anyOf branch that describes a failure: `error` is its only required or declared property."""
    if not isinstance(schema, dict):
        return False
    required = set(schema.get("required", []))
    props = set(schema.get("properties", {}))
    return (required == {"error"}) or (not required and props == {"error"})


def is_valid(schema: Any, value: Any) -> bool:
    """Whether `value` validates against `schema` (Draft 2020-12, with the formats Gecko checks)."""
    return SafeValidator(schema, format_checker=FORMAT_CHECKER).is_valid(value)


def generate_instance(schema: Any, seed: str, echo: Mapping[str, Any] | None = None, *,
                      check: Callable[[Any], bool] | None = None, cache: SchemaCache | None = None) -> Any:
    """A value that validates against `schema`: the first of up to `ATTEMPTS` generator runs that passes.

    Args:
        schema: a self-contained JSON Schema.
        seed: determines every choice; equal seeds give equal values.
        echo: argument values a same-named field may repeat (used by the first half of the attempts).
        check: the validity test (default: `is_valid` against `schema`); pass a precompiled one.
        cache: compiled checks to reuse across calls (see `SchemaCache`).

    Raises:
        UnsatisfiableSchema: no attempt produced a valid value, or `schema` is no JSON Schema.
    """
    if not isinstance(schema, (dict, bool)):
        raise UnsatisfiableSchema(f"{str(schema)[:80]!r} is no JSON Schema (an object or a boolean)")
    validator: Validator | None = None
    cache = cache if cache is not None else SchemaCache()  # one for every attempt: they meet the same schemas
    if check is None:
        validator = SafeValidator(schema, format_checker=FORMAT_CHECKER)
        check = validator.is_valid
    last_error = "no attempt"
    for attempt in range(ATTEMPTS):
        hints = echo if attempt < ATTEMPTS // 2 else None
        careful = attempt >= ATTEMPTS - CAREFUL_ATTEMPTS
        try:
            value = InstanceGenerator(schema, f"{seed}#{attempt}", hints, cache, careful=careful).generate()
        except ResponseTooLarge:
            raise  # every attempt would be as large
        except UnsatisfiableSchema as exc:
            last_error = str(exc)
            continue
        if check(value):
            return value
        validator = validator or SafeValidator(schema, format_checker=FORMAT_CHECKER)
        last_error = next(validator.iter_errors(value)).message
    raise UnsatisfiableSchema(last_error)


def generate_member(schema: Any, name: str, seed: str, cache: SchemaCache | None = None) -> Any:
    """A value for the property `name` of the object schema `schema` alone, deterministic per seed and valid against
    the property's own schema: cheaper than generating the whole instance again when only one field has to change
    (a new id for a taken one).

    Raises:
        LookupError: Neither `schema` (after `$ref`s) nor one of its success branches (`oneOf`/`anyOf`) declares a
            property `name`: generate the whole instance instead.
        UnsatisfiableSchema: the value made does not validate against the property's schema.
    """
    generator = InstanceGenerator(schema, f"{seed}#0", None, cache)
    member = _top_level_member(generator, schema, name)
    value = generator._value(member, name, 1)
    if not generator._valid(member, value):
        raise UnsatisfiableSchema(f"the value made for {name!r} does not validate")
    return value


def _top_level_member(generator: InstanceGenerator, schema: Any, name: str) -> Any:
    """The schema of property `name` of the object `schema` describes, or of its first success branch (a
    `oneOf`/`anyOf` of objects beside an error branch) that declares it.

    Raises:
        LookupError: No such property.
    """
    root = generator._deref(schema)
    candidates = [root]
    if isinstance(root, dict):
        for combiner in ("oneOf", "anyOf"):
            branches = root.get(combiner)
            if isinstance(branches, list):
                candidates += [generator._deref(b) for b in branches if not is_error_branch(generator._deref(b))]
    for candidate in candidates:
        members = candidate.get("properties") if isinstance(candidate, dict) else None
        if isinstance(members, dict) and name in members:
            return members[name]
    raise LookupError(f"no top-level property {name!r}")


class InstanceGenerator:
    """One generation run: a root schema, a seed, and argument values that may be echoed."""

    def __init__(self, root: Any, seed: str, echo: Mapping[str, Any] | None = None,
                 cache: SchemaCache | None = None, *, careful: bool = False) -> None:
        """Args:
            root: the self-contained schema.
            seed: determines every choice.
            echo: argument values a same-named field may repeat.
            cache: compiled sub-schema checks to reuse (see `SchemaCache`); a fresh one when omitted.
            careful: leave out an optional property whose value does not validate against its own declaration
                (a contradictory one, e.g. `type: array` with an `enum` of strings, in a real description).
        """
        self._careful = careful
        self._root = root if isinstance(root, dict) else {}
        self._root_schema = root
        self._defs = self._root.get("$defs") or _NO_DEFS
        self._seed = seed
        self._rng_made: random.Random | None = None
        self._echo = echo or {}
        self._cache = cache if cache is not None else SchemaCache()
        self._entry = self._cache.entry(root)
        self._nodes = self._entry.nodes
        self._prefix = f"{seed}|".encode()
        self._left = MAX_GENERATED_SIZE

    # -- helpers ---------------------------------------------------------------------------
    def _spend(self, size: int) -> None:
        """Count `size` against `MAX_GENERATED_SIZE` before building it.

        Raises:
            ResponseTooLarge: the instance would grow past the limit.
        """
        self._left -= size
        if self._left < 0:
            raise ResponseTooLarge(f"a generated value would be larger than {MAX_GENERATED_SIZE:,} characters and "
                                   "values (the schema's minLength, minItems or minProperties, or a pattern's "
                                   "repetition counts); Gecko simulates no larger response")

    def _hex(self, key: str, length: int = 8) -> str:
        return hashlib.sha256(self._prefix + key.encode()).hexdigest()[:length]

    def _picker(self, key: str) -> Pick:
        """`pick(salt, n)` for the field `key`: deterministic per seed, field and salt."""
        return lambda salt, n: int(self._hex(f"{key}|{salt}", 16), 16) % n

    def _needed_defs(self, schema: Any) -> dict[str, Any]:
        """The root `$defs` a sub-schema can reach through `#/$defs/…` references (all of them when it refers any
        other way): compiling a check with a real document's thousand definitions attached took 70 ms each."""
        names: set[str] = set()
        todo = [schema]
        while todo:
            node = todo.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str):
                    if not ref.startswith("#/$defs/"):
                        return dict(self._defs)
                    name = ref[len("#/$defs/"):].split("/")[0].replace("~1", "/").replace("~0", "~")
                    if name not in names and name in self._defs:
                        names.add(name)
                        todo.append(self._defs[name])
                todo.extend(v for k, v in node.items() if k != "$ref")
            elif isinstance(node, list):
                todo.extend(node)
        return {name: self._defs[name] for name in names}

    def _valid(self, schema: Any, value: Any) -> bool:
        if not isinstance(schema, dict):
            return schema is not False
        key = (id(schema), id(self._defs))
        entry = self._cache.checks.get(key)
        if entry is None:
            needed = self._needed_defs(schema) if self._defs and "$defs" not in schema else None
            wrapped = {**schema, "$defs": needed} if needed is not None else schema
            python = SafeValidator(wrapped, format_checker=FORMAT_CHECKER)
            # a check reaching many definitions compiles slowly in jsonschema-rs (70 ms each for Stripe's); the
            # Python validator resolves references on demand and answers the generator's small values faster
            check = python if needed is not None and len(needed) > LAZY_CHECK_DEFS else FastCheck(wrapped, python)
            entry = (check, schema, self._defs)
            self._cache.checks[key] = entry  # the entry keeps the schemas alive with their ids
            self._entry.checks.append(key)
        return entry[0].is_valid(value)

    def _deref(self, schema: Any) -> Any:
        """Follow `$ref`s (`#`, `#/$defs/...`, or any local JSON pointer); sibling keywords are kept.

        Raises:
            UnsatisfiableSchema: an external or unresolvable `$ref`, or a chain longer than `MAX_REF_HOPS`.
        """
        hops = 0
        while isinstance(schema, dict) and "$ref" in schema:
            if hops >= MAX_REF_HOPS:
                raise UnsatisfiableSchema("$ref chain too long or cyclic")
            target = self._ref_target(schema["$ref"])
            siblings = {k: v for k, v in schema.items() if k not in ("$ref", "$defs")}
            schema = {**target, **siblings} if siblings and isinstance(target, dict) else target
            hops += 1
        return schema

    def _ref_target(self, ref: Any) -> Any:
        if not isinstance(ref, str):
            raise UnsatisfiableSchema(f"$ref {ref!r} is not a string")
        if ref.startswith("#/$defs/"):
            target = self._defs.get(ref[len("#/$defs/"):].replace("~1", "/").replace("~0", "~"))
            if target is not None:
                return target
        try:
            return pointer_get(self._root_schema, ref)
        except SchemaRefError as exc:
            raise UnsatisfiableSchema(str(exc)) from exc

    # -- entry -----------------------------------------------------------------------------
    def generate(self, schema: Any = None) -> Any:
        """A value for `schema` (default: the root)."""
        return self._value(self._root_schema if schema is None else schema, "", 0)

    def _node(self, schema: Any) -> SchemaNode:
        """The node of `schema` (an object of this run's root schema), made on first use."""
        node = self._nodes.get(id(schema))
        if node is None:
            try:
                node = SchemaNode(schema, self._deref(schema))
            except UnsatisfiableSchema as exc:
                node = SchemaNode(schema, error=str(exc))
            self._cache.count_node()
            self._nodes[id(schema)] = node
        return node

    def _value(self, schema: Any, key: str, depth: int) -> Any:
        self._spend(1)
        node = self._node(schema)
        kind = node.kind
        if kind is TRIVIAL:
            return f"{key or 'value'}-{self._hex(key, 6)}" if key else {"status": "ok"}
        if kind is FALSE:
            raise UnsatisfiableSchema("schema 'false' accepts nothing")
        if kind is ODD:
            raise UnsatisfiableSchema(node.error or f"at {key or 'root'}: {str(node.target)[:80]!r} is no JSON Schema")
        target = node.target
        if key in self._echo and not isinstance(self._echo[key], (dict, list)) and self._valid(target, self._echo[key]):
            return self._echo[key]
        if node.has_const:
            return target["const"]
        if node.options is not None:
            return node.options[int(self._hex(key, 6), 16) % len(node.options)]
        if node.all_of:
            if node.merged is None:
                node.merged = self._merge_all(target)
            return self._value(node.merged, key, depth)
        if node.combiner is not None:
            return self._choice(node, key, depth)
        if kind == "object":
            return self._object(node, key, depth)
        if kind == "array":
            return self._array(node, key, depth)
        if kind == "string":
            return self._string(node, key)
        if kind == "integer":
            return self._integer(node, key)
        if kind == "number":
            return self._number(node, key)
        if kind == "boolean":
            return int(self._hex(key, 2), 16) % 2 == 0
        return None

    def _merge_all(self, schema: dict[str, Any]) -> dict[str, Any]:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = self._deref(part)
            if not isinstance(part, dict):
                continue
            if "allOf" in part:
                part = self._merge_all(part)
            for k, v in part.items():
                if k == "properties" and isinstance(v, dict):
                    merged["properties"] = _merge_properties(merged.get("properties", {}), v)
                elif k == "enum" and isinstance(merged.get("enum"), list) and isinstance(v, list):
                    merged["enum"] = [option for option in merged["enum"] if option in v]
                elif k == "required":
                    merged["required"] = sorted(set(merged.get("required", [])) | set(v))
                elif k in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"):
                    merged[k] = max(merged.get(k, v), v)
                elif k in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"):
                    merged[k] = min(merged.get(k, v), v)
                elif k not in merged:
                    merged[k] = v
        return merged

    def _choice(self, node: SchemaNode, key: str, depth: int) -> Any:
        schema, combiner = node.target, node.combiner
        assert combiner is not None
        if node.branches is None:
            branches = list(schema[combiner])
            node.branches = [b for b in branches if not is_error_branch(self._deref(b))] + [
                b for b in branches if is_error_branch(self._deref(b))]
        for attempt, branch in enumerate(node.branches):
            candidate_schema = self._candidate(node, attempt, branch)
            try:
                value = self._value(candidate_schema, key if attempt == 0 else f"{key}~{attempt}", depth)
            except UnsatisfiableSchema:
                continue
            if self._valid(schema, value):
                return value
            if combiner == "oneOf":  # valid for more than one branch: make it fail the others
                distinct = self._exclude_others(value, branch, [b for b in schema[combiner] if b is not branch])
                if distinct is not None and self._valid(schema, distinct):
                    return distinct
        raise UnsatisfiableSchema(f"no branch of {combiner} could be satisfied at {key or 'root'}")

    def _candidate(self, node: SchemaNode, attempt: int, branch: Any) -> Any:
        """The schema a value of `branch` (the `attempt`-th of the node's ordered branches) is made of: the branch,
        merged with the keywords beside the combiner when there are some. Made once per branch."""
        made = node.candidates
        if attempt < len(made):
            return made[attempt]
        base = {k: v for k, v in node.target.items() if k != node.combiner}
        sub = self._deref(branch)
        candidate = self._merge_all({**base, "allOf": [sub]}) if base and isinstance(sub, dict) else sub
        if attempt == len(made):  # (another thread running the same schema may have made it meanwhile)
            made.append(candidate)
        return made[attempt]

    def _exclude_others(self, value: Any, chosen: Any, others: list[Any]) -> dict[str, Any] | None:
        """`value` (valid for the `chosen` branch) changed so that it fails every other branch, or None.

        Open object branches overlap (real descriptions often have `oneOf` objects with no required property
        and no `additionalProperties: false`: `{}` satisfies all of them). An object still matching another
        branch loses a property that branch requires, or gets a value that branch's declaration of a property
        refuses, as long as it stays valid for the chosen branch."""
        if not isinstance(value, dict):
            return None
        out = dict(value)
        for other in others:
            if self._valid(other, out) and not self._break(out, chosen, other):
                return None
        return out

    def _break(self, out: dict[str, Any], chosen: Any, other: Any) -> bool:
        """Change `out` in place so that it fails `other` and still passes `chosen`; False if no way was found."""
        sub = self._deref(other)
        if not isinstance(sub, dict):
            return False
        for name in sub.get("required", []):
            if name in out:
                trial = {k: v for k, v in out.items() if k != name}
                if self._valid(chosen, trial) and not self._valid(other, trial):
                    del out[name]
                    return True
        properties = sub.get("properties", {})
        for name, declared in properties.items() if isinstance(properties, dict) else ():
            for probe in _PROBES:
                if self._valid(declared, probe):
                    continue
                trial = {**out, name: probe}
                if self._valid(chosen, trial) and not self._valid(other, trial):
                    out[name] = probe
                    return True
        return False

    # -- containers ------------------------------------------------------------------------
    def _object(self, node: SchemaNode, key: str, depth: int) -> dict[str, Any]:
        schema = node.target
        facts = node.facts
        if facts is None:
            facts = node.facts = ObjectFacts(schema, _ANY)
        out: dict[str, Any] = {}
        rich = depth < RICH_DEPTH and depth < MAX_DEPTH
        for name, sub, required, fillable in facts.properties:
            if required:
                out[name] = self._value(sub, name, depth + 1)
            elif rich and fillable:
                if self._careful:
                    try:
                        value = self._value(sub, name, depth + 1)
                    except UnsatisfiableSchema:
                        continue
                    if self._valid(sub, value):
                        out[name] = value
                    continue
                out[name] = self._value(sub, name, depth + 1)
        for name in facts.required:
            if name not in out:
                out[name] = self._value(facts.extra, name, depth + 1)
        index = 0
        while len(out) < int(schema.get("minProperties", 0)) and index < 1000:
            name = f"{key or 'key'}_{index}"
            index += 1
            if name not in out:
                out[name] = self._value(facts.extra, name, depth + 1)
        max_props = schema.get("maxProperties")
        if isinstance(max_props, int) and len(out) > max_props:
            keep = facts.required + [k for k in out if k not in facts.required]
            out = {k: out[k] for k in keep[:max_props]}
        return out

    def _array(self, node: SchemaNode, key: str, depth: int) -> list[Any]:
        schema = node.target
        facts = node.facts
        if facts is None:
            facts = node.facts = ArrayFacts(schema, _ANY)
        prefix, items, high = facts.prefix, facts.items, facts.high
        target = max(facts.low, len(prefix), 1 if depth < RICH_DEPTH else 0)
        if depth >= MAX_DEPTH - 2 or (facts.recursive and depth >= 2):
            target = max(facts.low, len(prefix))
        if isinstance(high, int):
            target = min(target, high)
        if items is False:
            target = min(target, len(prefix))
        self._spend(target)  # before building any item: `minItems: 5000000` stops here
        out: list[Any] = []
        attempts = 0
        while len(out) < target and attempts < target * 20 + 20:
            index = len(out)
            sub = prefix[index] if index < len(prefix) else items
            value = self._value(sub, f"{key}[{index}]" + (f"#{attempts}" if attempts else ""), depth + 1)
            attempts += 1
            if facts.unique and value in out:
                continue
            out.append(value)
        if "contains" in schema and not any(self._valid(schema["contains"], v) for v in out):
            value = self._value(schema["contains"], f"{key}[c]", depth + 1)
            if isinstance(high, int) and len(out) >= high and out:
                out[-1] = value
            else:
                out.append(value)
        return out

    # -- scalars ---------------------------------------------------------------------------
    def _string(self, node: SchemaNode, key: str) -> str:
        facts = node.facts
        if facts is None:
            facts = node.facts = StringFacts(node.target, _FORMATS)
        low, high, pattern = facts.low, facts.high, facts.pattern
        named = None if facts.make is not None else value_for_name(key, self._picker(key))
        if facts.make is not None:
            value = facts.make(self, key)
        elif named is not None:  # the field's name says what it holds; a `pattern` it misses is applied below
            value = named
        elif pattern:
            value = self._from_pattern(pattern, key, low, high)
        elif _is_id_key(key):
            value = self._hex(key, 10).upper()
        else:
            word = WORDS[int(self._hex(key, 4), 16) % len(WORDS)]
            value = f"{(key or 'text').split('[')[0]}-{word}-{self._hex(key, 4)}"
        if pattern and not search(pattern, value):
            value = self._from_pattern(pattern, key, low, high)
        self._spend(max(low, len(value)))
        if len(value) < low:
            value = value + "x" * (low - len(value))
        if isinstance(high, int) and len(value) > high:
            value = value[:high]
        return value

    def _from_pattern(self, pattern: str, key: str, low: int, high: Any) -> str:
        samples = self._cache.patterns.get(pattern)
        if samples is None:
            self._spend(_repeated(pattern) * PATTERN_SAMPLES)
            samples = self._cache.patterns[pattern] = pattern_samples(pattern, PATTERN_SAMPLES)
        limits = (pattern, low, high if isinstance(high, int) else None)
        pool = self._cache.pools.get(limits)
        if pool is None:
            fitting = [v for v in samples if len(v) >= low and (not isinstance(high, int) or len(v) <= high)]
            pool = self._cache.pools[limits] = fitting or samples
        if pool:
            return pool[int(self._hex(key, 8), 16) % len(pool)]
        return "".join(self._rng().choice(string.ascii_lowercase) for _ in range(max(low, 1)))

    def _rng(self) -> random.Random:
        """The run's random generator, seeded from its seed on first use (most runs never need it)."""
        if self._rng_made is None:
            self._rng_made = random.Random(int(hashlib.sha256(self._seed.encode()).hexdigest()[:16], 16))
        return self._rng_made

    def _bounds(self, schema: dict[str, Any], integer: bool) -> tuple[float, float]:
        low, high = -math.inf, math.inf
        step = 1 if integer else 0.01
        if "minimum" in schema:
            low = schema["minimum"]
        if "exclusiveMinimum" in schema and isinstance(schema["exclusiveMinimum"], (int, float)):
            low = max(low, schema["exclusiveMinimum"] + step)
        if "maximum" in schema:
            high = schema["maximum"]
        if "exclusiveMaximum" in schema and isinstance(schema["exclusiveMaximum"], (int, float)):
            high = min(high, schema["exclusiveMaximum"] - step)
        return low, high

    def _integer(self, node: SchemaNode, key: str) -> int:
        schema = node.target
        if node.facts is None:
            node.facts = self._bounds(schema, True)
        low, high = node.facts
        low_i = math.ceil(low) if low != -math.inf else (0 if high == math.inf or high >= 0 else int(high) - 100)
        high_i = math.floor(high) if high != math.inf else low_i + (100000 if _is_id_key(key) else 100)
        if high_i < low_i:
            raise UnsatisfiableSchema(f"empty integer range at {key}")
        value = low_i + int(self._hex(key, 12), 16) % (high_i - low_i + 1)
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            value = int(math.ceil(value / step) * step)
            if value > high_i:
                value = int(math.floor(high_i / step) * step)
        return int(value)

    def _number(self, node: SchemaNode, key: str) -> float:
        schema = node.target
        if node.facts is None:
            node.facts = self._bounds(schema, False)
        low, high = node.facts
        low_f = low if low != -math.inf else (0.0 if high == math.inf or high >= 0 else high - 100.0)
        high_f = high if high != math.inf else low_f + 1000.0
        if high_f < low_f:
            raise UnsatisfiableSchema(f"empty number range at {key}")
        fraction = int(self._hex(key, 8), 16) / 0xFFFFFFFF
        value = round(low_f + (high_f - low_f) * fraction, 2)
        value = min(max(value, low_f), high_f)
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0:
            value = math.ceil(low_f / step) * step if low_f != -math.inf else step
            value = round(value, 10)
        return float(value)


@functools.lru_cache(maxsize=8192)
def _is_id_key(key: str) -> bool:
    """Whether a field named `key` holds an identifier (`ID_KEY`): decided once per name."""
    return ID_KEY.search(key or "") is not None


def _merge_properties(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """Two `allOf` parts' `properties`: a name both declare must satisfy both declarations (a trait's
    `type: string` beside a node's `enum: [DOCUMENT]` is still `DOCUMENT`), so it becomes their `allOf`."""
    merged = dict(first)
    for name, declared in second.items():
        earlier = merged.get(name)
        if earlier is None or earlier is True or earlier == {}:
            merged[name] = declared
        elif declared is not True and declared != {} and declared != earlier:
            merged[name] = {"allOf": [earlier, declared]}
    return merged


def _repeated(pattern: str) -> int:
    """An upper estimate of the length of a string the pattern's `{n}` / `{n,m}` counts make (their product)."""
    size = 1
    for low, high in re.findall(r"\{(\d+)(?:,(\d*))?\}", pattern):
        size *= max(int(low), int(high or 0), 1)
        if size > MAX_GENERATED_SIZE:
            break
    return size


def _date(gen: InstanceGenerator, key: str) -> str:
    return (dt.date(2024, 1, 1) + dt.timedelta(days=int(gen._hex(key, 6), 16) % 730)).isoformat()


def _date_time(gen: InstanceGenerator, key: str) -> str:
    seconds = int(gen._hex(key, 8), 16) % 86400
    return f"{_date(gen, key)}T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


def _time(gen: InstanceGenerator, key: str) -> str:
    return _date_time(gen, key).split("T")[1]


_FORMATS = {
    "date": _date,
    "date-time": _date_time,
    "time": _time,
    "email": lambda g, k: f"user.{g._hex(k, 6)}@example.com",
    "uuid": lambda g, k: str(uuid.UUID(g._hex(k, 32))),
    "uri": lambda g, k: f"https://example.com/{re.sub(r'[^a-z0-9]+', '-', (k or 'item').lower())}/{g._hex(k, 8)}",
    "uri-reference": lambda g, k: f"/{(k or 'item').lower()}/{g._hex(k, 8)}",
    "url": lambda g, k: f"https://example.com/{g._hex(k, 8)}",
    "ipv4": lambda g, k: f"192.0.2.{int(g._hex(k, 2), 16) % 254 + 1}",
    "ipv6": lambda g, k: f"2001:db8::{g._hex(k, 4)}",
    "hostname": lambda g, k: f"host-{g._hex(k, 6)}.example.com",
}
