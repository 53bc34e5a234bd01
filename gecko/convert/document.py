"""Tool specs → one OpenAPI 3.1 document; deterministic serialisation; validation.

Shape of every document:

- one `POST /{operationId}` per tool; `operationId` is the safe form of the tool name
  (`gecko.convert.names`), the name itself is kept in `x-gecko-original-name`;
- the arguments are a required `application/json` request body: the source's object schema with
  `additionalProperties: false` unless the source said otherwise, or exactly as declared for sources whose schema
  is a contract of its own (MCP: `ToolSpec.close_arguments`);
- one `200` `application/json` response: the source's result schema, an LLM-inferred one, or
  `GENERIC_RESPONSE`; `x-gecko-response-origin` says which (`source`, `inferred`, `generic`);
- `x-gecko-access: read|write` when the source declares it;
- `x-gecko-provenance`: what the converter added or inferred, and from what (the arguments closed, the access
  read from an annotation, the generic result), so a user sees what is not the source's own contract;
- shared definitions under `components/schemas`, extra `info` keys such as `x-gecko-default-state`.

The same spec always gives the same bytes: dictionaries keep the source's order (so parameters
stay in their declared order), the builder adds keys in a fixed order, and `dump_document` uses
fixed separators and a trailing newline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gecko.convert.model import ConversionError, ToolkitSpec, ToolSpec
from gecko.convert.names import ORIGINAL_NAME_KEY, assign_operation_ids
from gecko.convert.schema import close_object

OPENAPI_VERSION = "3.1.0"
MEDIA_TYPE = "application/json"
GENERIC_RESPONSE: dict[str, Any] = {
    "type": "object",
    "description": (
        "Generic result: the tool's source declares no result schema, so any JSON object is accepted. "
        "Convert with --model to infer a specific schema."
    ),
}
"""Result schema of a tool whose source declares none and for which no schema was inferred."""
DEFAULT_RESPONSE_DESCRIPTION = "Successful result."


def _operation(tool: ToolSpec, op_id: str) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": op_id}
    if tool.title:
        op["summary"] = tool.title
    if tool.description:
        op["description"] = tool.description
    op[ORIGINAL_NAME_KEY] = tool.name
    if tool.access is not None:
        op["x-gecko-access"] = tool.access
    op["x-gecko-response-origin"] = tool.response_origin if tool.response is not None else "generic"
    arguments = close_object(tool.parameters) if tool.close_arguments else tool.parameters
    provenance = dict(tool.provenance)
    if arguments is not tool.parameters:
        provenance["arguments"] = ("closed by the converter: undeclared arguments are refused "
                                   "(the source does not say how it treats them)")
    if tool.response is None:
        provenance["response"] = "generic: the source declares no result schema"
    elif tool.response_origin == "inferred":
        provenance.setdefault("response", "inferred by a model from the tool's name, description and parameters")
    if provenance:
        op["x-gecko-provenance"] = provenance
    for key, value in tool.extensions.items():
        if not key.startswith("x-"):
            raise ConversionError(f"{tool.name}: operation extension {key!r} must start with 'x-'")
        op[key] = value
    op["requestBody"] = {"required": True, "content": {MEDIA_TYPE: {"schema": arguments}}}
    result = tool.response if tool.response is not None else GENERIC_RESPONSE
    op["responses"] = {
        "200": {
            "description": tool.response_description or DEFAULT_RESPONSE_DESCRIPTION,
            "content": {MEDIA_TYPE: {"schema": result}},
        }
    }
    return op


def build_document(spec: ToolkitSpec) -> dict[str, Any]:
    """The OpenAPI 3.1 document of a toolkit spec.

    Raises:
        ConversionError: duplicate tool names, or an `info` extension that is not `x-…`.
    """
    try:
        op_ids = assign_operation_ids([t.name for t in spec.tools])
    except ValueError as exc:
        raise ConversionError(f"toolkit {spec.title!r}: {exc}") from None
    info: dict[str, Any] = {"title": spec.title, "version": spec.version}
    if spec.description:
        info["description"] = spec.description
    for key, value in spec.info_extensions.items():
        if not key.startswith("x-"):
            raise ConversionError(f"toolkit {spec.title!r}: info extension {key!r} must start with 'x-'")
        info[key] = value
    doc: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": info,
        "paths": {f"/{op_id}": {"post": _operation(tool, op_id)} for tool, op_id in zip(spec.tools, op_ids)},
    }
    if spec.schemas:
        doc["components"] = {"schemas": dict(spec.schemas)}
    return doc


def dump_document(doc: dict[str, Any]) -> str:
    """Deterministic JSON text of a document (one-space indent, UTF-8 characters, final newline)."""
    return json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def write_document(doc: dict[str, Any], path: Path) -> None:
    """Write `dump_document(doc)` to `path` atomically (temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(dump_document(doc), encoding="utf-8")
    os.replace(tmp, path)


def validate_document(doc: dict[str, Any]) -> None:
    """Check a document with openapi-spec-validator.

    Raises:
        ConversionError: the validator's first complaint, with where it applies.
    """
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

    try:
        validate(doc)
    except OpenAPIValidationError as exc:
        where = "/".join(str(p) for p in getattr(exc, "absolute_path", []) or [])
        title = (doc.get("info") or {}).get("title", "?")
        raise ConversionError(
            f"toolkit {title!r}: not a valid OpenAPI document: {getattr(exc, 'message', exc)}"
            + (f" (at {where})" if where else "")
        ) from None
