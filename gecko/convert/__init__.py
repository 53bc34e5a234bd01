"""Tool definitions → OpenAPI 3.1 toolkits that the Gecko server loads (one document per toolkit).

Inputs: OpenAI tool/function JSON, BFCL (Gorilla) function docs, MCP `tools/list` results, xLAM /
APIGen tool lists and Python callables. Each has a `from_*` function returning the document as a dict; write it with
`write_document` (deterministic bytes). `python -m gecko.convert --help` is the CLI; README.md next
to this file has examples.
"""

from gecko.convert.api import from_bfcl, from_callables, from_mcp, from_openai, from_xlam, toolkit_document
from gecko.convert.document import (
    GENERIC_RESPONSE,
    build_document,
    dump_document,
    validate_document,
    write_document,
)
from gecko.convert.infer import InferFn, Prompt, ResponseInferrer, schema_problems
from gecko.convert.model import Access, ConversionError, ToolkitSpec, ToolSpec
from gecko.convert.names import assign_operation_ids, operation_names, original_names, safe_name

__all__ = [
    "GENERIC_RESPONSE", "Access", "ConversionError", "InferFn", "Prompt", "ResponseInferrer", "ToolSpec",
    "ToolkitSpec", "assign_operation_ids", "build_document", "dump_document", "from_bfcl", "from_callables",
    "from_mcp", "from_openai", "from_xlam", "operation_names", "original_names", "safe_name", "schema_problems",
    "toolkit_document", "validate_document", "write_document",
]
