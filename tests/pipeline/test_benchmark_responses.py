"""The response guarantee over every generated benchmark toolkit: each rules response validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.taubench.mock_toolkits import MOCK_DIR
from gecko.pipeline.synthesize.rules import NO_SCHEMA_RESPONSE, synthesize_rules
from gecko.toolkits import load_toolkits
from tests.infra import require
from utils.paths import DATA_DIR
from utils.schema.instance import SchemaCache
from utils.settings import Settings

DIRS = [DATA_DIR / "bfcl" / "openapi" / "single_turn", DATA_DIR / "bfcl" / "openapi" / "multi_turn", MOCK_DIR]


@pytest.mark.parametrize("directory", DIRS, ids=lambda d: f"{d.parent.name}/{d.name}")
def test_every_benchmark_response_validates(directory: Path):
    require(directory.is_dir() and any(directory.iterdir()), f"{directory} is not built (make setup builds it)")
    registry = load_toolkits([directory], cache_dir=Settings().state_dir)
    assert registry.tool_count > 0
    cache = SchemaCache()
    for toolkit in registry.toolkits.values():
        for op in toolkit.operations.values():
            for seed in ("a", "b"):
                body = synthesize_rules(op, {}, f"{op.tool_name}|{seed}", cache)
                if op.response_validator is None:
                    assert body == NO_SCHEMA_RESPONSE
                else:
                    errors = [e.message for e in op.response_validator.iter_errors(body)]
                    assert not errors, (op.tool_name, body, errors)
