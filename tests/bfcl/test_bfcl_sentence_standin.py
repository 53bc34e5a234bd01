"""The sentence-transformers stand-in that lets bfcl-eval's MemoryAPI_vector import without torch: the same model's
output as sentence-transformers gives (its recorded embeddings), registered only during that one import, and out of
the way where the real package is installed."""

from __future__ import annotations

import importlib.machinery
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from benchmarks.bfcl import sentence_standin
from benchmarks.bfcl.sentence_standin import (
    STANDIN_NAME,
    VECTOR_MODULE,
    SentenceTransformer,
    import_tool_module,
    max_seq_length,
)
from gecko.toolkits.search_encoder import EncoderUnavailable
from tests.infra import missing

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "search" / "minilm_reference.json"


@pytest.fixture(scope="module")
def model() -> SentenceTransformer:
    try:
        return SentenceTransformer("all-MiniLM-L6-v2", device="cpu")
    except EncoderUnavailable as exc:
        missing(f"no embedding model here ({exc}); `make setup` installs it")


@pytest.fixture
def fresh_vector_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """memory_vector imported anew in this test (and the process's copy back afterwards)."""
    monkeypatch.delitem(sys.modules, VECTOR_MODULE, raising=False)


def test_it_computes_what_sentence_transformers_computes(model: SentenceTransformer) -> None:
    """Recorded sentence-transformers embeddings (one text of 2,730 characters: cut at 256 word pieces), to 1e-4."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert model.max_seq_length == max_seq_length() == reference["max_seq_length"] == 256
    ours = model.encode(reference["sentences"], normalize_embeddings=True)
    assert ours.dtype == np.float32 and ours.shape == (len(reference["sentences"]), 384)
    assert np.abs(ours - np.array(reference["embeddings"], dtype=np.float32)).max() < 1e-4
    assert model.get_sentence_embedding_dimension() == 384
    one = model.encode(reference["sentences"][0])
    assert one.shape == (384,) and np.allclose(one, ours[0], atol=1e-6)
    assert np.allclose(model.encode(["  " + reference["sentences"][0] + "\n"]), ours[:1], atol=1e-6)


def test_it_refuses_another_model() -> None:
    with pytest.raises(ValueError, match="all-MiniLM-L6-v2 only"):
        SentenceTransformer("all-mpnet-base-v2", device="cpu")


def test_memory_vector_imports_with_it_only_during_that_import(model: SentenceTransformer,
                                                              fresh_vector_module: None) -> None:
    if not sentence_standin.uses_standin():
        pytest.skip("sentence-transformers is installed here: bfcl-eval imports it")
    module = import_tool_module(VECTOR_MODULE)
    assert isinstance(module.ENCODER, SentenceTransformer) and module.ENCODER_DIM == 384
    assert STANDIN_NAME not in sys.modules
    memory = module.MemoryAPI_vector()
    for text in ("My name is Michael and I live in Paris.", "The quarterly report is due on Friday."):
        memory.archival_memory_add(text)
    (hit,) = memory.archival_memory_retrieve("Where do I live?", top_k=1)["result"]
    assert hit["text"].startswith("My name is Michael")  # FAISS inner product over the model's unit vectors


def test_the_real_package_is_used_untouched_where_installed(monkeypatch: pytest.MonkeyPatch,
                                                            fresh_vector_module: None) -> None:
    """A module registered as `sentence_transformers` (as an installed package is found): memory_vector's encoder is
    that package's class, not the stand-in."""
    built: list[tuple[str, str]] = []

    class Real:
        def __init__(self, name: str, device: str) -> None:
            built.append((name, device))

        def get_sentence_embedding_dimension(self) -> int:
            return 384

    real = ModuleType(STANDIN_NAME)
    real.__spec__ = importlib.machinery.ModuleSpec(STANDIN_NAME, None)
    real.SentenceTransformer = Real  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, STANDIN_NAME, real)
    module = import_tool_module(VECTOR_MODULE)
    assert isinstance(module.ENCODER, Real) and built == [("all-MiniLM-L6-v2", "cpu")]


def test_without_faiss_the_import_fails_with_its_reason(monkeypatch: pytest.MonkeyPatch,
                                                        fresh_vector_module: None) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)  # as if faiss-cpu were not installed
    with pytest.raises(ImportError, match="faiss"):
        import_tool_module(VECTOR_MODULE)
    if sentence_standin.uses_standin():
        assert STANDIN_NAME not in sys.modules


def test_without_the_model_the_import_fails_as_an_import_error(monkeypatch: pytest.MonkeyPatch,
                                                               fresh_vector_module: None) -> None:
    if not sentence_standin.uses_standin():
        pytest.skip("sentence-transformers is installed here: bfcl-eval imports it")

    def unavailable(directory: object = None) -> None:
        raise EncoderUnavailable("dense search needs the embedding model package")

    monkeypatch.setattr(sentence_standin, "max_seq_length", unavailable)
    with pytest.raises(ImportError, match="stand-in cannot load all-MiniLM-L6-v2"):
        import_tool_module(VECTOR_MODULE)
    assert STANDIN_NAME not in sys.modules
