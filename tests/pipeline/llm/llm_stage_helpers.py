"""Shared data for the LLM stage tests."""

from __future__ import annotations

from typing import Any

from gecko.pipeline.stages import CallContext
from gecko.toolkits.model import Toolkit

NOTES_DOC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Notes", "version": "1.0", "description": "A small notes service."},
    "paths": {
        "/notes": {
            "post": {
                "operationId": "create_note",
                "description": "Create a note in a folder.",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/NoteIn"}}}},
                "responses": {"201": {"description": "created", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Note"}}}}},
            },
            "get": {
                "operationId": "list_notes",
                "description": "List the notes of a folder.",
                "parameters": [{"name": "folder", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok", "content": {"application/json": {
                    "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Note"}}}}}},
            },
        },
        "/notes/{note_id}": {
            "delete": {
                "operationId": "delete_note",
                "description": "Delete a note.",
                "parameters": [{"name": "note_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
                    "type": "object", "properties": {"deleted": {"type": "boolean"}}, "required": ["deleted"],
                    "additionalProperties": False}}}}},
            },
        },
    },
    "components": {"schemas": {
        "NoteIn": {"type": "object", "properties": {"title": {"type": "string", "minLength": 1},
                                                     "body": {"type": "string"}, "folder": {"type": "string"}},
                   "required": ["title"]},
        "Note": {"type": "object", "properties": {
            "id": {"type": "string", "format": "uuid"}, "title": {"type": "string"},
            "folder": {"type": "string"}, "created": {"type": "string", "format": "date-time"}},
            "required": ["id", "title"], "additionalProperties": False},
    }},
}



def call_context(toolkit: Toolkit, op: str, arguments: dict[str, Any], state: dict[str, Any] | None = None,
                 **kw: Any) -> CallContext:
    return CallContext("s1", toolkit.operations[op], arguments, state if state is not None else {}, **kw)
