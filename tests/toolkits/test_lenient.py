"""Lenient loading of real-world documents (issue 33 item 4): unambiguous faults are repaired with one warning each
naming the place, what cannot be simulated is left out per operation, and `strict` refuses as before."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from gecko.toolkits import ToolkitLoadError, load_toolkits
from tests.conftest import TESTS_DIR

VENDOR = TESTS_DIR / "data" / "vendor" / "faulty_vendor.json"
EXPECTED_POINTERS = {
    "/paths/~1broken/get",  # a $ref that does not resolve: only this operation is left out
    "/paths/~1addresses/get/parameters/0/schema/default",  # "100" for an int32
    "/paths/~1addresses/get/parameters/1/schema/default",  # "false" for a boolean
    "/paths/~1addresses/get/parameters/2/example",  # a number for an enum of strings
    "/paths/~1search?q={q}/get/responses/200/content/application~1json/schema/properties/total/default",  # > int64
    "/components/schemas/Country/enum",  # a value twice
    "/components/schemas/Address/required",  # a name twice
    "/components/schemas/Address/example",
    "/components/schemas/Address/properties/street/example",
    "/components/schemas/Address/properties/zip/pattern",  # not a string
    "/components/schemas/Address/properties/tags/example",
    "/components/schemas/LabelRequest/required",  # required beside allOf, declared nowhere
    "/paths/~1addresses/get/parameters/3",  # the same parameter twice
    "/paths/~1addresses~1{addressId}/put/parameters",  # an undeclared path variable
    "/paths/~1search?q={q}/get/parameters",
    "/paths/~1labels/post/operationId",  # an operationId used twice
    "/paths/~1addresses~1{addressId}/get",  # one name in path and query
}


@pytest.fixture
def vendor_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "docs"
    directory.mkdir()
    shutil.copy(VENDOR, directory / "vendor.json")
    return directory


def _warned_pointers(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage().split(": ", 2)[1] for r in caplog.records
            if r.levelno == logging.WARNING and "vendor.json: /" in r.getMessage()]


def test_each_fault_class_is_repaired_once_with_its_pointer(vendor_dir, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="gecko.toolkits.loader")
    registry = load_toolkits([vendor_dir], cache_dir=tmp_path / "cache")
    toolkit = registry.toolkit("vendor")
    assert toolkit is not None
    assert set(toolkit.operations) == {"findAddresses", "getAddress", "putAddress", "search", "createLabel",
                                       "post_labels"}
    pointers = _warned_pointers(caplog)
    assert sorted(pointers) == sorted(EXPECTED_POINTERS)  # once each
    find = toolkit.operations["findAddresses"]
    assert "default" not in find.args_schema["properties"]["limit"]
    assert [p.name for p in find.parameters].count("limit") == 1
    assert toolkit.operations["getAddress"].response_schema  # a percent-encoded $ref pointer resolves
    assert toolkit.operations["search"].args_schema["required"] == ["q"]


def test_warm_start_warns_again_and_skips_nothing_it_needs(vendor_dir, tmp_path, caplog):
    load_toolkits([vendor_dir], cache_dir=tmp_path / "cache")
    caplog.clear()
    caplog.set_level(logging.WARNING, logger="gecko.toolkits.loader")
    registry = load_toolkits([vendor_dir], cache_dir=tmp_path / "cache")
    assert len(registry.toolkit("vendor").operations) == 6
    assert sorted(_warned_pointers(caplog)) == sorted(EXPECTED_POINTERS)


def test_strict_refuses_the_document(vendor_dir, tmp_path):
    with pytest.raises(ToolkitLoadError, match="vendor.json"):
        load_toolkits([vendor_dir], cache_dir=tmp_path / "cache", strict=True)


def test_a_document_with_nothing_to_simulate_is_still_refused(tmp_path):
    (tmp_path / "ext.json").write_text(
        '{"openapi": "3.1.0", "info": {"title": "Ext", "version": "1"}, "paths": {"/x": {"post": {'
        '"operationId": "x", "responses": {"200": {"description": "ok", "content": {"application/json": {'
        '"schema": {"$ref": "#/components/schemas/Gone"}}}}}}}}}')
    with pytest.raises(ToolkitLoadError, match="no operation can be simulated.*Gone"):
        load_toolkits([tmp_path])
