"""Load OpenAPI 3.0/3.1 documents from directories into compiled toolkits (once, at start-up)."""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeGuard

import jsonschema_rs
import orjson
import yaml
from jsonschema.protocols import Validator

from gecko.toolkits.access import operation_access
from gecko.toolkits.guards import (
    DEFAULT_MAX_NODES,
    RESERVED_NAMES,
    DocumentRefused,
    bounded_response,
    check_document,
)
from gecko.toolkits.lenient import Fault, derived_operation_id, repair_document
from gecko.toolkits.model import BODY_KEY, BodyMode, Operation, Parameter, Toolkit
from gecko.toolkits.names import aliases
from gecko.toolkits.registry import ToolkitRegistry
from gecko.toolkits.resources import infer_world
from gecko.toolkits.schemas import (
    InvalidSchemaError,
    SchemaPreparer,
    check_schema,
    resolve_object,
)
from gecko.toolkits.snapshots import ToolkitSnapshots
from gecko.toolkits.validation_cache import Known, ValidationCache
from gecko.upstream.spec import UPSTREAM_KEY, parse_upstream
from utils.jsonutil import json_pointer
from utils.schema.formats import FORMAT_CHECKER
from utils.schema.patterns import SafeValidator
from utils.schema.refs import SchemaRefError

log = logging.getLogger(__name__)

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DOC_SUFFIXES = (".json", ".yaml", ".yml")
PARALLEL_VALIDATION_MIN = 24
FULL_VALIDATION_MAX_OPERATIONS = 300
PROGRESS_EVERY_S = 2.0
"""Least seconds between two progress lines of a long load."""
Progress = Callable[[str], None]
POOL_LABELS_KEY = "x-gecko-pool"
"""`info.x-gecko-pool`: labels of a toolkit of the open-world pool (app, source, origin), shown by tool search."""
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ToolkitLoadError(Exception):
    """A schemas directory or document that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class _Source:
    path: Path
    data: bytes
    doc: dict[str, Any]
    key: str


def slugify(text: str) -> str:
    """URL-safe toolkit name from a title (`Pet Store API` → `pet-store-api`)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def list_documents(directory: Path) -> list[Path]:
    """Toolkit files of one schemas directory, sorted by name."""
    if not directory.is_dir():
        raise ToolkitLoadError(f"schemas dir {str(directory)!r} does not exist or is not a directory")
    return sorted(p for p in directory.iterdir() if p.suffix.lower() in DOC_SUFFIXES and p.is_file())


def parse_document(path: Path, data: bytes) -> dict[str, Any]:
    """Parse JSON or YAML bytes; raise ToolkitLoadError naming the file."""
    try:
        if path.suffix.lower() == ".json":
            doc = orjson.loads(data)
        else:
            doc = yaml.load(data, Loader=_YAML_LOADER)  # noqa: S506 - safe loader
    except (ValueError, orjson.JSONDecodeError, yaml.YAMLError) as exc:
        raise ToolkitLoadError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from exc
    if not isinstance(doc, dict):
        raise ToolkitLoadError(f"{path}: an OpenAPI document must be a mapping at the top level")
    version = str(doc.get("openapi", ""))
    if not re.match(r"^3\.[01]\.\d+", version):
        raise ToolkitLoadError(
            f"{path}: unsupported 'openapi' version {version or '(missing)'}; Gecko loads OpenAPI 3.0.x and 3.1.x"
        )
    return doc


def operation_count(doc: dict[str, Any]) -> int:
    paths = doc.get("paths") or {}
    return sum(1 for item in paths.values() if isinstance(item, dict) for m in HTTP_METHODS if m in item)


def spec_errors(doc: dict[str, Any], strict: bool = True) -> str | None:
    """Validate a document; return a one-line problem or None.

    `strict` (the default, and always for documents up to FULL_VALIDATION_MAX_OPERATIONS operations) runs
    openapi-spec-validator. Larger documents otherwise get the fast check (`fast_spec_errors`): the
    same OpenAPI meta-schema through jsonschema-rs; each operation's schemas are then checked against the
    JSON Schema 2020-12 meta-schema when compiled. openapi-spec-validator re-validates every schema
    object against the dialect in pure Python and takes 8 s+ on a 1,000-operation document.
    """
    if not strict and operation_count(doc) > FULL_VALIDATION_MAX_OPERATIONS:
        return fast_spec_errors(doc)
    os.environ.setdefault("OPENAPI_SPEC_VALIDATOR_SCHEMA_VALIDATOR_BACKEND", "auto")
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    try:
        validate(doc)
    except OpenAPIValidationError as exc:
        where = "/".join(str(p) for p in getattr(exc, "absolute_path", []) or [])
        message = getattr(exc, "message", str(exc))
        return f"{message}" + (f" (at {where})" if where else "")
    except Exception as exc:  # noqa: BLE001 - the validator raises assorted types (e.g. Unresolvable $ref)
        return f"{type(exc).__name__}: {exc}"
    return None


def fast_spec_errors(doc: dict[str, Any]) -> str | None:
    """The OpenAPI 3.0/3.1 meta-schema (as shipped by openapi-spec-validator) checked with jsonschema-rs."""
    try:
        validator = _meta_validator(str(doc.get("openapi", "")).startswith("3.0"))
        error = next(iter(validator.iter_errors(doc)), None)
    except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.instance_path)
    return f"{error.message}" + (f" (at {where})" if where else "")


@functools.cache
def _meta_validator(openapi_30: bool) -> Any:
    """The compiled OpenAPI 3.0 or 3.1 meta-schema (compiled once per process: ~8 ms each time)."""
    from openapi_spec_validator.schemas import schema_v30, schema_v31

    return jsonschema_rs.validator_for(_plain(schema_v30 if openapi_30 else schema_v31))


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "items"):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _validate_all(sources: list[_Source], known: dict[str, Known | None], strict: bool,
                  progress: Progress) -> dict[Path, str]:
    """Validate the documents the cache does not know; (path → problem) of those that fail."""
    pending = [s for s in sources if known.get(s.key) is None]
    problems: dict[Path, str] = {}
    if not pending:
        return problems
    progress(f"validating {len(pending)} document(s) not seen before ({len(sources) - len(pending)} known valid)")
    check = partial(spec_errors, strict=strict)
    pool = (ProcessPoolExecutor(max_workers=min(os.cpu_count() or 2, 8))
            if len(pending) >= PARALLEL_VALIDATION_MIN and (os.cpu_count() or 1) > 1 else None)
    try:
        results = pool.map(check, [s.doc for s in pending], chunksize=16) if pool else map(check, (s.doc for s in pending))
        said = time.monotonic()
        for done, (source, problem) in enumerate(zip(pending, results), 1):
            if problem:
                problems[source.path] = problem
            if time.monotonic() - said >= PROGRESS_EVERY_S:
                progress(f"validated {done} of {len(pending)} document(s)")
                said = time.monotonic()
    finally:
        if pool is not None:
            pool.shutdown()
    return problems


def _repair(source: _Source, known: Known | None) -> list[Fault]:
    """Lenient loading's repairs of one document; skipped for a document that loaded before with nothing to repair."""
    return [] if known is not None and not known.faults else repair_document(source.doc)


def _mode(strict_validation: bool, strict: bool, max_nodes: int) -> str:
    """The loading settings a document's verdict and its loaded toolkit depend on."""
    return ("strict" if strict_validation else "auto") + ("" if strict else "-lenient") + f"-nodes{max_nodes}"


def _cache(cache_dir: Path | None, strict_validation: bool, strict: bool, max_nodes: int) -> ValidationCache:
    return ValidationCache(cache_dir, _mode(strict_validation, strict, max_nodes))


def known_documents(dirs: list[Path], *, cache_dir: Path | None, strict_validation: bool = False,
                    strict: bool = False, max_nodes: int = DEFAULT_MAX_NODES) -> tuple[int, int, list[str]] | None:
    """(toolkits, tools, the faults repaired) when every document of `dirs` loaded before under this Gecko (the
    toolkit cache says so), else None. A warm start's check needs no compile: the serving workers compile anyway.

    Raises:
        ToolkitLoadError: a directory does not exist.
    """
    cache = _cache(cache_dir, strict_validation, strict, max_nodes)
    names: set[str] = set()
    tools = 0
    faults: list[str] = []
    for directory in dirs:
        for path in list_documents(Path(directory)):
            known = cache.known(cache.key(path.read_bytes()))
            if known is None:
                return None
            if path.stem not in names:
                names.add(path.stem)
                tools += known.tools
                faults.extend(f"{path}: {fault}" for fault in known.faults)
    return len(names), tools, faults


def _quiet(message: str) -> None:
    """The default progress report: the log at debug level."""
    log.debug("%s", message)


def load_toolkits(
    dirs: list[Path], *, skip_invalid: bool = False, cache_dir: Path | None = None, validate: bool = True,
    strict_validation: bool = False, strict: bool = False, warn: bool = True, progress: Progress = _quiet,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> ToolkitRegistry:
    """Load every toolkit of `dirs` (priority order) into a registry.

    Args:
        dirs: schemas directories, highest priority first.
        skip_invalid: log and skip bad documents instead of raising.
        cache_dir: where to remember documents that already passed validation, and the toolkits they loaded into
            (`gecko.toolkits.snapshots`: a warm start reads those instead of building them; None: no cache).
        validate: run document validation at all (tests of the compiler only).
        strict_validation: openapi-spec-validator on every document, however large (see `spec_errors`).
        max_nodes: most JSON values a document may expand to, YAML aliases counted each time they are used; a
            document over it, with a reference outside itself or with a route's name is refused unread
            (`gecko.toolkits.guards`).
        strict: refuse a document for any fault (`--strict`); by default the faults whose meaning is unambiguous
            are repaired and an operation that cannot be simulated is left out (`gecko.toolkits.lenient`).
        warn: log each repaired fault once, with its JSON pointer (the serving workers load quietly: the
            start-up check in the parent has said it).
        progress: called with a line now and then while a long load goes on (start-up prints them).

    Raises:
        ToolkitLoadError: a missing directory, or an invalid document when `skip_invalid` is false.
    """
    from gecko.toolkits.prebuilt import load_prebuilt

    # a directory with a prebuilt index (gecko pool build) is registered from it: each toolkit loads on first use
    prebuilt = load_prebuilt(dirs, skip_invalid=skip_invalid, cache_dir=cache_dir, validate=validate,
                             strict_validation=strict_validation, strict=strict, max_nodes=max_nodes)
    if prebuilt is not None:
        return prebuilt
    cache = _cache(cache_dir, strict_validation, strict, max_nodes)
    snapshots = ToolkitSnapshots(cache_dir if validate else None, _mode(strict_validation, strict, max_nodes))
    sources: list[_Source] = []
    failures: list[str] = []
    kept: dict[Path, tuple[Toolkit, list[str]]] = {}
    """Toolkits read from their snapshots (nothing to parse, guard, repair, validate or build)."""
    order: list[Path] = []
    snapshot_keys: dict[Path, str] = {}
    for directory in dirs:
        for path in list_documents(Path(directory)):
            data = path.read_bytes()
            order.append(path)
            snapshot_keys[path] = snapshots.key(path, data)
            found = snapshots.read(snapshot_keys[path])
            if found is not None:
                kept[path] = found
                continue
            try:
                doc = parse_document(path, data)
                check_document(path.stem, doc, max_nodes)
                sources.append(_Source(path, data, doc, cache.key(data)))
            except ToolkitLoadError as exc:
                failures.append(str(exc))
            except DocumentRefused as exc:
                failures.append(f"{path}: {exc}")
    progress(f"loading {len(sources) + len(kept)} document(s) from {len(dirs)} director{'y' if len(dirs) == 1 else 'ies'}"
             + (f" ({len(kept)} from the toolkit cache)" if kept else ""))
    known = {source.key: cache.known(source.key) for source in sources}  # one read of each marker
    faults = {} if strict else {source.path: _repair(source, known[source.key]) for source in sources}
    problems = _validate_all(sources, known, strict_validation, progress) if validate else {}
    failures.extend(f"{path}: invalid OpenAPI document: {problem}" for path, problem in problems.items())
    built: dict[Path, Toolkit] = {}
    said = time.monotonic()
    for done, source in enumerate(sources, 1):
        if time.monotonic() - said >= PROGRESS_EVERY_S:
            progress(f"compiled {done - 1} of {len(sources)} toolkit(s)")
            said = time.monotonic()
        if source.path in problems:
            continue
        try:
            toolkit = build_toolkit(source.path, source.doc, faults.get(source.path))
            built[source.path] = toolkit
            repaired = [str(f) for f in faults.get(source.path, [])]
            if validate and known[source.key] is None:
                cache.remember(source.key, len(toolkit.operations), repaired)
            if validate:
                snapshots.write(snapshot_keys[source.path], toolkit, repaired)
        except (ToolkitLoadError, SchemaRefError, InvalidSchemaError, ValueError) as exc:
            failures.append(f"{source.path}: {exc}")
    registry = ToolkitRegistry()
    for path in order:  # priority order, whether built now or read from a snapshot
        toolkit_now = kept[path][0] if path in kept else built.get(path)
        if toolkit_now is not None:
            registry.add(toolkit_now)
    if warn:
        for path in order:
            for fault in kept[path][1] if path in kept else faults.get(path, []):
                log.warning("%s: %s", path, fault)
    if failures:
        if not skip_invalid:
            more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
            raise ToolkitLoadError(failures[0] + more + "; fix the document or start with --skip-invalid")
        for failure in failures:
            log.warning("skipped toolkit: %s", failure)
    return registry


def load_document(path: Path, data: bytes, *, strict: bool = False) -> tuple[Toolkit, list[Fault]]:
    """One document as `load_toolkits` loads it (fast validation for large ones): the toolkit and the faults
    repaired or left out on the way (none when `strict`).

    Raises:
        ToolkitLoadError: the document cannot be used (the message says why).
    """
    doc = parse_document(path, data)
    faults = [] if strict else repair_document(doc)
    problem = spec_errors(doc, strict=False)
    if problem:
        raise ToolkitLoadError(f"invalid OpenAPI document: {problem}")
    try:
        return build_toolkit(path, doc, None if strict else faults), faults
    except (SchemaRefError, InvalidSchemaError, ValueError, RecursionError) as exc:
        raise ToolkitLoadError(f"{type(exc).__name__}: {exc}") from exc


def _media_schema(content: Any) -> tuple[bool, Any]:
    """(has JSON content, its schema) of a `content` map; JSON media types first."""
    if not isinstance(content, dict) or not content:
        return False, None
    ranked = sorted(content.items(), key=lambda kv: (0 if "json" in kv[0] else 1, kv[0]))
    media_type, media = ranked[0]
    if not isinstance(media, dict):
        return False, None
    return True, media.get("schema", {})


def _response_schema(doc: dict[str, Any], responses: Any, status: str = r"2(\d\d|XX)") -> tuple[bool, Any]:
    """(the status is declared, its JSON body schema or None) for the first response code matching `status`."""
    if not isinstance(responses, dict):
        return False, None
    codes = sorted(str(c) for c in responses if re.fullmatch(status, str(c), re.IGNORECASE))
    if not codes:
        return False, None
    response = resolve_object(doc, responses.get(codes[0], responses.get(int(codes[0]) if codes[0].isdigit() else "")))
    has, schema = _media_schema(response.get("content") if isinstance(response, dict) else None)
    return True, schema if has else None


@dataclass(frozen=True)
class _Success:
    """The success response an operation declares."""

    status: int = 200
    has_body: bool = True
    schema: Any = None
    headers: tuple[str, ...] = ()


NO_BODY_STATUSES = frozenset({204, 205, 304})


def _success(doc: dict[str, Any], responses: Any, method: str) -> _Success:
    """The status a success answers and its body schema: 201 for a POST that declares 201, else the lowest
    declared 2xx (`2XX` counts as 200); 200 with no schema when the document declares no 2xx at all."""
    if not isinstance(responses, dict):
        return _Success()
    codes = sorted(str(c) for c in responses if re.fullmatch(r"2(\d\d|XX)", str(c), re.IGNORECASE))
    if not codes:
        return _Success()
    code = "201" if method == "post" and "201" in codes else codes[0]
    raw = responses.get(code, responses.get(int(code) if code.isdigit() else ""))
    response = resolve_object(doc, raw)
    has, schema = _media_schema(response.get("content") if isinstance(response, dict) else None)
    status = int(code) if code.isdigit() else 200
    headers = response.get("headers") if isinstance(response, dict) else None
    names = tuple(str(h) for h in headers) if isinstance(headers, dict) else ()
    return _Success(status, has and status not in NO_BODY_STATUSES, schema if has else None, names)


def _is_merge_patch(body: Any) -> bool:
    content = body.get("content") if isinstance(body, dict) else None
    return isinstance(content, dict) and any(str(m).split(";")[0].strip().lower() == "application/merge-patch+json"
                                             for m in content)


_operation_id = derived_operation_id


def _is_plain_object(schema: Any) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(schema, dict)
        and (schema.get("type") == "object" or ("properties" in schema and "type" not in schema))
        and not any(k in schema for k in ("allOf", "anyOf", "oneOf", "if", "not", "$ref"))
    )


def _args_schema(
    params: list[Parameter], body: Any, body_required: bool, preparer: SchemaPreparer
) -> tuple[dict[str, Any], BodyMode]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in params:
        properties[param.name] = param.schema
        if param.required:
            required.append(param.name)
    if body is None:
        schema = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            schema["required"] = required
        return schema, "none"
    prepared = preparer.prepare(body)
    defs = prepared.pop("$defs", None) if isinstance(prepared, dict) else None
    target = prepared
    if isinstance(prepared, dict) and "$ref" in prepared and defs and len(prepared) == 1:
        key = prepared["$ref"].removeprefix("#/$defs/")
        target = defs.get(key, prepared)
    body_props = target.get("properties", {}) if isinstance(target, dict) else {}
    if _is_plain_object(target) and not set(body_props) & set(properties):
        merged = {k: v for k, v in target.items() if k not in ("properties", "required")}
        merged["type"] = "object"
        merged["properties"] = {**properties, **body_props}
        body_req = list(target.get("required", [])) if body_required else []
        if required or body_req:
            merged["required"] = required + [r for r in body_req if r not in required]
        if defs:
            merged["$defs"] = defs
        return merged, "merged"
    properties[BODY_KEY] = prepared
    if body_required:
        required.append(BODY_KEY)
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    if defs:
        schema["$defs"] = defs
    return schema, "nested"


def _hoist_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """Parameters' prepared schemas may carry `$defs`; lift them to the args schema root."""
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    for name, sub in list(schema.get("properties", {}).items()):
        if isinstance(sub, dict) and "$defs" in sub and name != BODY_KEY:
            defs.update(sub["$defs"])
            schema["properties"][name] = {k: v for k, v in sub.items() if k != "$defs"}
    body = schema.get("properties", {}).get(BODY_KEY)
    if isinstance(body, dict) and "$defs" in body:
        defs.update(body["$defs"])
        schema["properties"][BODY_KEY] = {k: v for k, v in body.items() if k != "$defs"}
    if defs:
        schema["$defs"] = defs
    return schema


def _compile(schema: Any, where: str) -> Validator:
    check_schema(schema, where)
    return SafeValidator(schema, format_checker=FORMAT_CHECKER)


def build_toolkit(path: Path, doc: dict[str, Any], faults: list[Fault] | None = None) -> Toolkit:
    """Compile one parsed document into a Toolkit.

    Args:
        path: the document's file (its stem names the toolkit).
        doc: the parsed document.
        faults: lenient loading (see `gecko.toolkits.lenient`): an operation that cannot be compiled is left out and
            reported here, as are parameters declared twice and undeclared path variables (declared as strings).
            None (strict): the first problem raises.

    Raises:
        ToolkitLoadError: strict, a duplicate operationId; lenient, no operation could be compiled.
        SchemaRefError, InvalidSchemaError, ValueError: strict, an operation that cannot be compiled.
    """
    openapi_30 = str(doc.get("openapi", "")).startswith("3.0")
    preparer = SchemaPreparer(doc, openapi_30)
    info = doc.get("info") or {}
    name = path.stem
    operations: dict[str, Operation] = {}
    for route, item in (doc.get("paths") or {}).items():
        item = resolve_object(doc, item)
        if not isinstance(item, dict):
            continue
        shared = [resolve_object(doc, p) for p in item.get("parameters", [])]
        for method in HTTP_METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            op_id = str(op.get("operationId") or _operation_id(method, route))
            if op_id in operations:
                raise ToolkitLoadError(f"duplicate operationId {op_id!r}")
            try:
                declared = {(p.get("name"), p.get("in")): p for p in shared if isinstance(p, dict)}
                for raw in op.get("parameters", []):
                    p = resolve_object(doc, raw)
                    if isinstance(p, dict):
                        declared[(p.get("name"), p.get("in"))] = p
                params: list[Parameter] = []
                for (p_name, p_in), p in declared.items():
                    if p_in not in ("path", "query", "header", "cookie") or not p_name:
                        continue
                    if faults is not None and any(q.name == str(p_name) for q in params):
                        faults.append(Fault(json_pointer(["paths", route, method]), f"parameter {p_name!r} is "
                                            f"declared in two places: the {p_in} one is left out"))
                        continue
                    schema = p.get("schema")
                    if schema is None:
                        schema = _media_schema(p.get("content"))[1] or {}
                    params.append(Parameter(str(p_name), p_in, bool(p.get("required") or p_in == "path"),
                                            preparer.prepare(schema), str(p.get("description") or "")))
                body_obj = resolve_object(doc, op.get("requestBody")) if op.get("requestBody") else None
                has_body, body_schema = _media_schema(body_obj.get("content")) if isinstance(body_obj, dict) else (False, None)
                args_schema, mode = _args_schema(
                    params, body_schema if has_body else None, bool(body_obj and body_obj.get("required")), preparer
                )
                args_schema = _hoist_defs(args_schema)
                success = _success(doc, op.get("responses"), method)
                raw_response = success.schema if success.has_body else None
                response_schema = preparer.prepare(raw_response) if raw_response is not None else None
                response_schema = bounded_response(response_schema, f"{path}: {op_id}")
                not_found, raw_not_found = _response_schema(doc, op.get("responses"), "404")
                not_found_schema = preparer.prepare(raw_not_found) if raw_not_found is not None else None
                not_found_schema = bounded_response(not_found_schema, f"{path}: {op_id} (404)")
                if response_schema is True or response_schema == {}:
                    response_schema = {}
                original = str(op.get("x-gecko-original-name") or op_id)
                operations[op_id] = Operation(
                    toolkit=name,
                    operation_id=op_id,
                    method=method,
                    path=route,
                    access=operation_access(op, method, original),
                    summary=str(op.get("summary") or ""),
                    description=str(op.get("description") or op.get("summary") or ""),
                    original_name=original,
                    parameters=tuple(params),
                    body_mode=mode,
                    body_required=bool(body_obj and body_obj.get("required")),
                    args_schema=args_schema,
                    response_schema=response_schema,
                    args_validator=_compile(args_schema, f"{op_id} arguments"),
                    response_validator=(_compile(response_schema, f"{op_id} response")
                                        if response_schema is not None else None),
                    extensions={k: v for k, v in op.items() if k.startswith("x-")},
                    not_found_declared=not_found,
                    not_found_schema=not_found_schema if isinstance(not_found_schema, dict) else None,
                    success_status=success.status,
                    success_has_body=success.has_body,
                    success_headers=success.headers,
                    merge_patch=_is_merge_patch(body_obj),
                )
            except (SchemaRefError, InvalidSchemaError, ValueError, RecursionError) as exc:
                if faults is None:
                    raise
                faults.append(Fault(json_pointer(["paths", route, method]),
                                    f"operation {op_id!r} cannot be simulated and is left out: {exc}", dropped=True))
    if faults and not operations and any(f.dropped for f in faults):
        raise ToolkitLoadError(f"no operation can be simulated; first: {next(f for f in faults if f.dropped)}")
    for op_id, alias in aliases(operations).items():
        operations[op_id].alias = alias
    default_state = info.get("x-gecko-default-state", doc.get("x-gecko-default-state"))
    upstream = info.get(UPSTREAM_KEY, doc.get(UPSTREAM_KEY))
    infer_world(name, operations, default_state if isinstance(default_state, dict) else None)
    title = str(info.get("title") or name)
    labels = info.get(POOL_LABELS_KEY)
    return Toolkit(
        name=name,
        title=title,
        version=str(info.get("version") or ""),
        description=str(info.get("description") or ""),
        source=str(path),
        openapi_version=str(doc.get("openapi")),
        operations=operations,
        default_state=default_state if isinstance(default_state, dict) else None,
        aliases=(slugify(title),) if slugify(title) and slugify(title) not in RESERVED_NAMES | {name} else (),
        upstream=parse_upstream(upstream) if upstream is not None else None,
        labels={str(k): v for k, v in labels.items() if isinstance(v, str)} if isinstance(labels, dict) else {},
    )
